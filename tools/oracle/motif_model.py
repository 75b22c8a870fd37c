"""Motif (MotifForCausalLM) forward passes in float64 numpy, written from the math.

A third oracle beside model.py (difftx's docs/SPEC.md) and hf_model.py (Llama, DiffLlama): Motif
Technologies' checkpoints with grouped differential attention (GDA, arXiv 2510.06949) and
PolyNorm. Written from the math of issue 28, with the head layout confirmed by reading three
independent ports (Motif's vLLM fork, aphrodite-engine, mlx-motif; no code taken from them);
docs/FORMATS.md "Motif (MotifForCausalLM)" lists what was assumed. numpy only, so that its
checks (check_motif_model.py) run wherever numpy does, without torch.

The model (d = head_dim, Hq query heads, Hkv key/value heads, N noise heads, r = (Hq - N) / N
signal heads per noise head, S = N r signal heads, P = Hkv / 2 key/value pairs):
- Pre-norm decoder: x += o_proj(attn(rms(x) g1)); x += down(PolyNorm(gate(h)) * up(h)),
  h = rms(x) g2; logits = (rms(x) g) head^T, head = embed_tokens when tied. rms(x) =
  x / sqrt(mean(x^2) + rms_norm_eps).
- Query heads come in N groups of r + 1 consecutive heads: r signal heads, then the group's
  noise head. Signal head j is query head (j // r)(r + 1) + j % r; noise head g is query head
  g (r + 1) + r. Without `num_noise_heads`, N = Hq / 2 (r = 1: heads 2i, 2i + 1 pair up).
- Key/value heads come in pairs: pair m is K1/V1 = head 2m, K2/V2 = head 2m + 1. Signal head
  j reads pair j // (S / P), noise head g pair g // (N / P) (the same pair as its signal heads).
- Rotate-half RoPE over each whole d-wide query and key head; scale 1 / sqrt(d).
- Signal head j, noise head g = j // r: o_j = (A1_j - lambda A2_g) [V1 | V2] (2d wide), A the
  causal softmax maps, then RMSNorm over the 2d features with the gain `subln.weight` and
  eps `attn_rms_norm_eps`, times (1 - lambda_init); o_proj reads the S outputs (2 S d).
- lambda = exp(lambda_q1 . lambda_k1) - exp(lambda_q2 . lambda_k2) + lambda_init, one scalar
  per layer; lambda_init = 0.8 - 0.6 exp(-0.3 (l - 1)) with l the 0-based layer index.
- PolyNorm(z) = w0 z^3 / rho(z^3) + w1 z^2 / rho(z^2) + w2 z / rho(z) + b, rho(u) =
  sqrt(mean(u^2) + 1e-6) over the intermediate features.
"""

import json
import math
import os
from dataclasses import dataclass

import numpy as np

from safetensors_io import read_safetensors_arrays

ARCHITECTURE = "MotifForCausalLM"
MODEL_TYPES = ("Motif", "motif")  # the ports disagree on the spelling; both are accepted
POLYNORM_EPS = 1e-6
INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"


@dataclass(frozen=True)
class MotifConfig:
    """The config.json keys that change the math, with the defaults the ports assume."""
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    num_noise_heads: int
    head_dim: int
    rms_norm_eps: float
    attn_rms_norm_eps: float
    rope_theta: float
    tie_word_embeddings: bool

    @staticmethod
    def from_dict(values):
        """Reads a Motif config.json dict; refuses what this oracle does not model, by name."""
        if ARCHITECTURE not in (values.get("architectures") or []):
            raise ValueError(f"config: architectures {values.get('architectures')!r} lacks {ARCHITECTURE}")
        if values.get("model_type") not in MODEL_TYPES:
            raise ValueError(f"config: model_type {values.get('model_type')!r} is not one of {MODEL_TYPES}")
        if values.get("hidden_act", "poly_norm") != "poly_norm":
            raise ValueError(f"config: hidden_act {values['hidden_act']!r} is not poly_norm")
        for key in ("use_bias", "attention_bias", "mlp_bias", "qkv_bias", "use_sliding_window"):
            if values.get(key):
                raise ValueError(f"config: {key} true is not modelled")
        if values.get("rope_scaling") is not None:
            raise ValueError("config: rope_scaling is not modelled (only null)")
        if values.get("k_ratio", 1) != 1:
            raise ValueError(f"config: k_ratio {values['k_ratio']} is not modelled (only 1: K heads in pairs)")
        heads = values["num_attention_heads"]
        noise = values.get("num_noise_heads")
        if noise is None:
            if heads % 2:
                raise ValueError("config: without num_noise_heads, num_attention_heads must be even")
            noise = heads // 2
        head_dim = values.get("head_dim")
        if head_dim is None and values.get("num_noise_heads") is not None:
            raise ValueError("config: num_noise_heads without head_dim (Motif's vLLM fork requires head_dim then)")
        if head_dim is None:
            if values["hidden_size"] % heads:
                raise ValueError("config: without head_dim, num_attention_heads must divide hidden_size")
            head_dim = values["hidden_size"] // heads
        cfg = MotifConfig(
            vocab_size=values["vocab_size"],
            hidden_size=values["hidden_size"],
            intermediate_size=values["intermediate_size"],
            num_hidden_layers=values["num_hidden_layers"],
            num_attention_heads=heads,
            num_key_value_heads=values.get("num_key_value_heads") or heads,
            num_noise_heads=noise,
            head_dim=head_dim,
            rms_norm_eps=values.get("rms_norm_eps", 1e-6),
            attn_rms_norm_eps=values.get("attn_rms_norm_eps", 1e-5),
            rope_theta=values.get("rope_theta", 10000.0),
            tie_word_embeddings=values.get("tie_word_embeddings", False),
        )
        cfg.validate()
        if values.get("grouped_ratio") is not None and values["grouped_ratio"] != cfg.ratio:
            raise ValueError(f"config: grouped_ratio {values['grouped_ratio']} != (heads - noise) / noise = {cfg.ratio}")
        return cfg

    def validate(self):
        H, N, Hkv = self.num_attention_heads, self.num_noise_heads, self.num_key_value_heads
        if not 0 < N < H or H % N:
            raise ValueError(f"config: num_noise_heads {N} must be below and divide num_attention_heads {H}")
        if Hkv % 2:
            raise ValueError(f"config: num_key_value_heads {Hkv} must be even (K1/K2 pairs)")
        if N % (Hkv // 2):
            raise ValueError(f"config: the {Hkv // 2} key/value pairs must divide the {N} noise heads")
        if self.head_dim % 2:
            raise ValueError("config: head_dim must be even for RoPE")

    @property
    def ratio(self):
        """r: signal heads per noise head."""
        return (self.num_attention_heads - self.num_noise_heads) // self.num_noise_heads

    @property
    def signal_heads(self):
        return self.num_noise_heads * self.ratio

    @property
    def pairs(self):
        return self.num_key_value_heads // 2


def signal_query_head(cfg, j):
    return (j // cfg.ratio) * (cfg.ratio + 1) + j % cfg.ratio


def noise_query_head(cfg, g):
    return g * (cfg.ratio + 1) + cfg.ratio


def signal_pair(cfg, j):
    return j // (cfg.signal_heads // cfg.pairs)


def noise_pair(cfg, g):
    return g // (cfg.num_noise_heads // cfg.pairs)


def lambda_init(layer):
    """0.8 - 0.6 exp(-0.3 (l - 1)), l the 0-based layer index (DiffLlama has no - 1)."""
    return 0.8 - 0.6 * math.exp(-0.3 * (layer - 1))


def layer_lambda(p, layer):
    return (math.exp(float(p["lambda_q1"] @ p["lambda_k1"]))
            - math.exp(float(p["lambda_q2"] @ p["lambda_k2"])) + lambda_init(layer))


def rms(x, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)


def polynorm(z, weight, bias):
    """w0 z^3/rho(z^3) + w1 z^2/rho(z^2) + w2 z/rho(z) + b over the last axis."""
    return (weight[0] * rms(z ** 3, POLYNORM_EPS) + weight[1] * rms(z ** 2, POLYNORM_EPS)
            + weight[2] * rms(z, POLYNORM_EPS) + bias[0])


def rope(x, positions, theta):
    """Rotate-half RoPE on x [..., T, d]: pair (i, i + d/2) turns by angle t theta^(-2i/d)."""
    d = x.shape[-1]
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta ** (-2.0 * np.arange(d // 2) / d)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    a, b = x[..., :d // 2], x[..., d // 2:]
    return np.concatenate((a * cos - b * sin, b * cos + a * sin), axis=-1)


def project_heads(x, weight, heads, d):
    """x [B, T, D] @ weight^T -> [B, heads, T, d]."""
    B, T, _ = x.shape
    return (x @ weight.T).reshape(B, T, heads, d).transpose(0, 2, 1, 3)


def softmax(scores):
    scores = scores - scores.max(-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(-1, keepdims=True)


def causal_probabilities(q, k):
    """softmax(q k^T / sqrt(d)) over the keys at or before each query: [B, T, d] -> [B, T, T]."""
    T = q.shape[-2]
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    future = np.triu(np.ones((T, T), dtype=bool), 1)
    return softmax(np.where(future, -np.inf, scores))


def head_output(cfg, p, layer, out):
    """The 2d-wide head norm: RMSNorm(out) subln * (1 - lambda_init)."""
    return rms(out, cfg.attn_rms_norm_eps) * p["subln.weight"] * (1 - lambda_init(layer))


def attention(cfg, p, x, layer):
    """GDA over a whole sequence, head by head: o_proj's input [B, T, 2 S d]."""
    d = cfg.head_dim
    positions = np.arange(x.shape[1])
    q = rope(project_heads(x, p["q_proj.weight"], cfg.num_attention_heads, d), positions, cfg.rope_theta)
    k = rope(project_heads(x, p["k_proj.weight"], cfg.num_key_value_heads, d), positions, cfg.rope_theta)
    v = project_heads(x, p["v_proj.weight"], cfg.num_key_value_heads, d)
    lam = layer_lambda(p, layer)
    outputs = []
    for j in range(cfg.signal_heads):
        g, m = j // cfg.ratio, signal_pair(cfg, j)
        n = noise_pair(cfg, g)
        a1 = causal_probabilities(q[:, signal_query_head(cfg, j)], k[:, 2 * m])
        a2 = causal_probabilities(q[:, noise_query_head(cfg, g)], k[:, 2 * n + 1])
        out = np.concatenate((a1 @ v[:, 2 * m] - lam * (a2 @ v[:, 2 * n]),
                              a1 @ v[:, 2 * m + 1] - lam * (a2 @ v[:, 2 * n + 1])), axis=-1)
        outputs.append(head_output(cfg, p, layer, out))
    return np.concatenate(outputs, axis=-1)


def layer_params(params, layer, module):
    prefix = f"model.layers.{layer}.{module}."
    return {n[len(prefix):]: t for n, t in params.items() if n.startswith(prefix)}


def mlp(params, layer, h):
    """down(PolyNorm(gate(h)) * up(h))."""
    p = layer_params(params, layer, "mlp")
    return (polynorm(h @ p["gate_proj.weight"].T, p["act_fn.weight"], p["act_fn.bias"])
            * (h @ p["up_proj.weight"].T)) @ p["down_proj.weight"].T


def lm_head(cfg, params, x):
    head = params["model.embed_tokens.weight" if cfg.tie_word_embeddings else "lm_head.weight"]
    return (rms(x, cfg.rms_norm_eps) * params["model.norm.weight"]) @ head.T


def forward(cfg, params, ids):
    """Logits [B, T, V] for token ids [B, T] at positions 0 .. T-1 (the whole sequence at once)."""
    eps = cfg.rms_norm_eps
    x = params["model.embed_tokens.weight"][np.asarray(ids)]
    for layer in range(cfg.num_hidden_layers):
        attn = layer_params(params, layer, "self_attn")
        h = rms(x, eps) * params[f"model.layers.{layer}.input_layernorm.weight"]
        x = x + attention(cfg, attn, h, layer) @ attn["o_proj.weight"].T
        x = x + mlp(params, layer, rms(x, eps) * params[f"model.layers.{layer}.post_attention_layernorm.weight"])
    return lm_head(cfg, params, x)


class KVCache:
    """Per layer, the rotated keys and the values of every position so far: [B, Hkv, t, d]."""

    def __init__(self, cfg):
        self.keys = [None] * cfg.num_hidden_layers
        self.values = [None] * cfg.num_hidden_layers
        self.length = 0

    def append(self, layer, k, v):
        if self.keys[layer] is None:
            self.keys[layer], self.values[layer] = k, v
        else:
            self.keys[layer] = np.concatenate((self.keys[layer], k), axis=2)
            self.values[layer] = np.concatenate((self.values[layer], v), axis=2)
        return self.keys[layer], self.values[layer]


def decode_attention(cfg, p, x, layer, cache):
    """GDA for one new position per row (x [B, 1, D]) against the cache: [B, 1, 2 S d]."""
    d, position = cfg.head_dim, [cache.length]
    q = rope(project_heads(x, p["q_proj.weight"], cfg.num_attention_heads, d), position, cfg.rope_theta)
    k, v = cache.append(layer,
                        rope(project_heads(x, p["k_proj.weight"], cfg.num_key_value_heads, d), position, cfg.rope_theta),
                        project_heads(x, p["v_proj.weight"], cfg.num_key_value_heads, d))
    lam = layer_lambda(p, layer)
    outputs = []
    for j in range(cfg.signal_heads):
        g, m = j // cfg.ratio, signal_pair(cfg, j)
        n = noise_pair(cfg, g)
        # One query row against all cached keys: nothing to mask.
        a1 = softmax(q[:, signal_query_head(cfg, j)] @ np.swapaxes(k[:, 2 * m], -1, -2) / math.sqrt(d))
        a2 = softmax(q[:, noise_query_head(cfg, g)] @ np.swapaxes(k[:, 2 * n + 1], -1, -2) / math.sqrt(d))
        value = np.concatenate((v[:, 2 * m], v[:, 2 * m + 1]), axis=-1)
        noise_value = np.concatenate((v[:, 2 * n], v[:, 2 * n + 1]), axis=-1)
        outputs.append(head_output(cfg, p, layer, a1 @ value - lam * (a2 @ noise_value)))
    return np.concatenate(outputs, axis=-1)


def decode_step(cfg, params, ids, cache):
    """Logits [B, V] of one new token per row (ids [B]) at position cache.length; fills the cache."""
    eps = cfg.rms_norm_eps
    x = params["model.embed_tokens.weight"][np.asarray(ids)][:, None, :]
    for layer in range(cfg.num_hidden_layers):
        attn = layer_params(params, layer, "self_attn")
        h = rms(x, eps) * params[f"model.layers.{layer}.input_layernorm.weight"]
        x = x + decode_attention(cfg, attn, h, layer, cache) @ attn["o_proj.weight"].T
        x = x + mlp(params, layer, rms(x, eps) * params[f"model.layers.{layer}.post_attention_layernorm.weight"])
    cache.length += 1
    return lm_head(cfg, params, x)[:, 0]


def decode(cfg, params, ids):
    """Logits [B, T, V] computed token by token through the KV cache."""
    cache = KVCache(cfg)
    ids = np.asarray(ids)
    return np.stack([decode_step(cfg, params, ids[:, t], cache) for t in range(ids.shape[1])], axis=1)


def parameter_shapes(cfg):
    """Every tensor of a MotifForCausalLM checkpoint as (name, shape), in the modules' order."""
    D, d, V, F = cfg.hidden_size, cfg.head_dim, cfg.vocab_size, cfg.intermediate_size
    H, Hkv, S = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.signal_heads
    shapes = [("model.embed_tokens.weight", (V, D))]
    for layer in range(cfg.num_hidden_layers):
        a, m = f"model.layers.{layer}.self_attn.", f"model.layers.{layer}.mlp."
        shapes += [(a + "q_proj.weight", (H * d, D)), (a + "k_proj.weight", (Hkv * d, D)),
                   (a + "v_proj.weight", (Hkv * d, D)), (a + "o_proj.weight", (D, 2 * S * d))]
        shapes += [(a + n, (d,)) for n in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")]
        shapes += [(a + "subln.weight", (2 * d,)),
                   (m + "gate_proj.weight", (F, D)), (m + "up_proj.weight", (F, D)),
                   (m + "down_proj.weight", (D, F)), (m + "act_fn.weight", (3,)), (m + "act_fn.bias", (1,)),
                   (f"model.layers.{layer}.input_layernorm.weight", (D,)),
                   (f"model.layers.{layer}.post_attention_layernorm.weight", (D,))]
    shapes.append(("model.norm.weight", (D,)))
    if not cfg.tie_word_embeddings:
        shapes.append(("lm_head.weight", (V, D)))
    return shapes


def _read_tensors(directory):
    """Every tensor of model.safetensors, or of the shards model.safetensors.index.json lists
    (each listed tensor in its shard, each shard tensor listed), as float64 arrays."""
    index_path, single_path = os.path.join(directory, INDEX), os.path.join(directory, SINGLE)
    if os.path.exists(index_path) == os.path.exists(single_path):
        raise ValueError(f"{directory}: needs exactly one of {SINGLE} and {INDEX}")
    if not os.path.exists(index_path):
        arrays, _ = read_safetensors_arrays(single_path)
        return {n: a.astype(np.float64) for n, a in arrays.items()}
    with open(index_path) as f:
        weight_map = json.load(f)["weight_map"]
    tensors = {}
    for shard in sorted(set(weight_map.values())):
        if os.path.basename(shard) != shard:
            raise ValueError(f"{index_path}: shard {shard!r} is not a file in the directory")
        arrays, _ = read_safetensors_arrays(os.path.join(directory, shard))
        listed = {n for n, s in weight_map.items() if s == shard}
        if set(arrays) != listed:
            raise ValueError(f"{shard}: holds {sorted(set(arrays) - listed)} unlisted, lacks {sorted(listed - set(arrays))}")
        tensors.update({n: a.astype(np.float64) for n, a in arrays.items()})
    return tensors


def load_checkpoint(directory):
    """(MotifConfig, {name: float64 array}) of a checkpoint directory; every tensor the config
    needs, of its shape, and no other (`*.rotary_emb.inv_freq`, `cos_cached` and `sin_cached`
    buffers are dropped, as Motif's vLLM fork drops them)."""
    with open(os.path.join(directory, "config.json")) as f:
        cfg = MotifConfig.from_dict(json.load(f))
    buffers = (".rotary_emb.inv_freq", ".rotary_emb.cos_cached", ".rotary_emb.sin_cached")
    tensors = {n: a for n, a in _read_tensors(directory).items() if not n.endswith(buffers)}
    shapes = dict(parameter_shapes(cfg))
    missing, extra = sorted(set(shapes) - set(tensors)), sorted(set(tensors) - set(shapes))
    if missing or extra:
        raise ValueError(f"{directory}: tensors missing {missing}, unexpected {extra}")
    for name, shape in shapes.items():
        if tensors[name].shape != shape:
            raise ValueError(f"{directory}: {name} has shape {tensors[name].shape}, expected {shape}")
    return cfg, tensors


def init_parameters(cfg, rng):
    """Random float64 parameters that exercise every path: embeddings and lm_head N(0, 0.3^2),
    linear weights N(0, 0.2^2), norm gains 1 + N(0, 0.1^2), lambda vectors N(0, 0.1^2),
    PolyNorm weights 1/3 + N(0, 0.1^2) (its initial value plus noise) and bias N(0, 0.1^2)."""
    params = {}
    for name, shape in parameter_shapes(cfg):
        noise = rng.standard_normal(shape)
        if name in ("model.embed_tokens.weight", "lm_head.weight"):
            params[name] = 0.3 * noise
        elif name.endswith("norm.weight") or name.endswith("subln.weight"):
            params[name] = 1.0 + 0.1 * noise
        elif name.endswith("act_fn.weight"):
            params[name] = 1.0 / 3.0 + 0.1 * noise
        elif len(shape) == 1:
            params[name] = 0.1 * noise
        else:
            params[name] = 0.2 * noise
    return params
