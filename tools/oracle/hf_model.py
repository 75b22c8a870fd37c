"""Hugging Face LlamaForCausalLM and DiffLlamaForCausalLM forward passes, written from the math.

A second, independent oracle next to model.py (which follows difftx's own docs/SPEC.md): this one
follows the semantics of transformers' `llama` and `diffllama` model types, read from
transformers' modeling_llama.py, modeling_diffllama.py and modeling_rope_utils.py and
re-derived here (no code taken from them). It shares nothing with model.py, so the
cross-check in check_hf_model.py compares two implementations. Everything is plain PyTorch
in the caller's dtype (the fixtures use float64); attention is written head by head.

The facts it encodes (see README.md "Hugging Face models"):
- Decoder: x += o_proj(attn(rms(x) * g1)); x += down(silu(gate(h)) * up(h)), h = rms(x) * g2;
  logits = (rms(x) * g_final) @ lm_head^T, with lm_head = embed_tokens when tied.
  rms(x) = x / sqrt(mean(x^2) + rms_norm_eps).
- RoPE is rotate-half: pair (j, j + d/2) of a d-wide head turns by angle t * f_j, with
  f_j = rope_theta^(-2j/d) rescaled by `rope_scaling` (`linear`, `llama3`).
- Llama attention: head h reads kv head h // n_rep (n_rep = H / Hkv), scale 1/sqrt(d).
- DiffLlama attention: num_attention_heads H counts both softmax maps. Map i (i < H/2) pairs
  with map i + H/2; map j reads key head j // n_rep; both maps of pair i weight the same
  2d-wide value [v_(i // n_rep) | v_((i + H/2) // n_rep)]; out_i = (A_i - lambda A_(i+H/2)) V_i,
  then rms over the 2d features WITHOUT a gain, times (1 - lambda_init); pair i fills o_proj
  input columns [2 i d, 2 (i+1) d). lambda = exp(sum(lq1 * lk1)) - exp(sum(lq2 * lk2)) +
  lambda_init per layer, lambda_init = 0.8 - 0.6 exp(-0.3 layer_idx), layer_idx from 0.
"""

import math
from dataclasses import dataclass

import torch

MODEL_TYPES = {"llama": "LlamaForCausalLM", "diffllama": "DiffLlamaForCausalLM"}
ROPE_TYPES = ("default", "linear", "llama3")


@dataclass(frozen=True)
class HFConfig:
    """The config.json keys that change the math, with transformers' defaults."""
    model_type: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    rope_scaling: object  # None or the rope_scaling dict
    tie_word_embeddings: bool
    max_position_embeddings: int

    @staticmethod
    def from_dict(values):
        """Reads a transformers config.json dict; refuses what this oracle does not model."""
        model_type = values["model_type"]
        if model_type not in MODEL_TYPES:
            raise ValueError(f"config: model_type {model_type!r} is not one of {list(MODEL_TYPES)}")
        if values.get("hidden_act", "silu") != "silu":
            raise ValueError(f"config: hidden_act {values['hidden_act']!r} is not silu")
        for key in ("attention_bias", "mlp_bias"):
            if values.get(key, False):
                raise ValueError(f"config: {key} true is not modelled")
        heads = values["num_attention_heads"]
        cfg = HFConfig(
            model_type=model_type,
            vocab_size=values["vocab_size"],
            hidden_size=values["hidden_size"],
            intermediate_size=values["intermediate_size"],
            num_hidden_layers=values["num_hidden_layers"],
            num_attention_heads=heads,
            num_key_value_heads=values.get("num_key_value_heads") or heads,
            head_dim=values.get("head_dim") or values["hidden_size"] // heads,
            rms_norm_eps=values.get("rms_norm_eps", 1e-6 if model_type == "llama" else 1e-5),
            rope_theta=values.get("rope_theta", 10000.0),
            rope_scaling=values.get("rope_scaling"),
            tie_word_embeddings=values.get("tie_word_embeddings", False),  # both classes default False
            max_position_embeddings=values["max_position_embeddings"],
        )
        cfg.validate()
        return cfg

    def validate(self):
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("config: num_key_value_heads must divide num_attention_heads")
        if self.head_dim % 2:
            raise ValueError("config: head_dim must be even for RoPE")
        if self.model_type == "diffllama" and self.num_attention_heads % 2:
            raise ValueError("config: diffllama needs an even num_attention_heads (two maps per head)")
        if rope_type(self) not in ROPE_TYPES:
            raise ValueError(f"config: rope_scaling type {rope_type(self)!r} not in {ROPE_TYPES}")

    @property
    def n_rep(self):
        return self.num_attention_heads // self.num_key_value_heads


def rope_type(cfg):
    """'default' without rope_scaling; else its `rope_type` (older files: `type`)."""
    if cfg.rope_scaling is None:
        return "default"
    return cfg.rope_scaling.get("rope_type", cfg.rope_scaling.get("type"))


def default_frequencies(theta, head_dim):
    """f_j = theta^(-2j/d), j = 0 .. d/2 - 1, in float64."""
    return torch.tensor([theta ** (-2.0 * j / head_dim) for j in range(head_dim // 2)],
                        dtype=torch.float64)


def llama3_band(wavelength, scaling):
    """Which llama3 band a pair with this wavelength (2 pi / f) is in: 'high', 'medium', 'low'.

    Short wavelengths (< original / high_freq_factor) keep their frequency; long ones
    (> original / low_freq_factor) are divided by `factor`; in between the two are blended.
    """
    original = scaling["original_max_position_embeddings"]
    if wavelength < original / scaling["high_freq_factor"]:
        return "high"
    if wavelength > original / scaling["low_freq_factor"]:
        return "low"
    return "medium"


def llama3_frequency(f, scaling):
    """One pair's llama3 frequency: f, f / factor, or the blend (1 - s) f / factor + s f with
    s = (original / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)."""
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    wavelength = 2 * math.pi / f
    band = llama3_band(wavelength, scaling)
    if band == "high":
        return f
    if band == "low":
        return f / factor
    s = (scaling["original_max_position_embeddings"] / wavelength - low) / (high - low)
    return (1 - s) * f / factor + s * f


def rope_frequencies(cfg):
    """The d/2 pair frequencies after rope_scaling, float64."""
    f = default_frequencies(cfg.rope_theta, cfg.head_dim)
    kind = rope_type(cfg)
    if kind == "linear":  # positions / factor, i.e. every frequency / factor
        return f / cfg.rope_scaling["factor"]
    if kind == "llama3":
        return torch.tensor([llama3_frequency(x, cfg.rope_scaling) for x in f.tolist()],
                            dtype=torch.float64)
    return f


def rotate_half_rope(x, positions, frequencies):
    """x [..., T, d]: pair (j, j + d/2) at position t turns by t * f_j, counter-clockwise."""
    angle = positions.to(torch.float64)[:, None] * frequencies[None, :]
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)


def rms(x, eps):
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def causal_probabilities(q, k):
    """softmax(q k^T / sqrt(d)) over keys at or before the query: q, k [B, T, d] -> [B, T, T]."""
    T = q.shape[-2]
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)


def lambda_init(layer_idx):
    """DiffLlama: 0.8 - 0.6 exp(-0.3 layer_idx), layer_idx counted from 0."""
    return 0.8 - 0.6 * math.exp(-0.3 * layer_idx)


def diff_lambda(p, layer_idx):
    return (torch.exp((p["lambda_q1"] * p["lambda_k1"]).sum())
            - torch.exp((p["lambda_q2"] * p["lambda_k2"]).sum()) + lambda_init(layer_idx))


class _Projections:
    """One layer's rotated query and key heads and value heads, sliced from the projections."""

    def __init__(self, cfg, p, x, positions, frequencies):
        d = cfg.head_dim
        q, k, v = x @ p["q_proj.weight"].T, x @ p["k_proj.weight"].T, x @ p["v_proj.weight"].T
        self.q = [rotate_half_rope(q[..., h * d:(h + 1) * d], positions, frequencies)
                  for h in range(cfg.num_attention_heads)]
        self.k = [rotate_half_rope(k[..., g * d:(g + 1) * d], positions, frequencies)
                  for g in range(cfg.num_key_value_heads)]
        self.v = [v[..., g * d:(g + 1) * d] for g in range(cfg.num_key_value_heads)]


def llama_attention(cfg, p, x, positions, frequencies, layer_idx):
    """Concatenated head outputs [B, T, H d] (o_proj's input); head h reads kv head h // n_rep."""
    heads = _Projections(cfg, p, x, positions, frequencies)
    outputs = []
    for h in range(cfg.num_attention_heads):
        g = h // cfg.n_rep
        outputs.append(causal_probabilities(heads.q[h], heads.k[g]) @ heads.v[g])
    return torch.cat(outputs, dim=-1)


def diffllama_attention(cfg, p, x, positions, frequencies, layer_idx):
    """Concatenated pair outputs [B, T, (H/2) 2d]: map i minus lambda times map i + H/2."""
    heads = _Projections(cfg, p, x, positions, frequencies)
    half, n_rep = cfg.num_attention_heads // 2, cfg.n_rep
    lam = diff_lambda(p, layer_idx)
    outputs = []
    for i in range(half):
        first, second = i, i + half
        value = torch.cat((heads.v[first // n_rep], heads.v[second // n_rep]), dim=-1)
        a1 = causal_probabilities(heads.q[first], heads.k[first // n_rep])
        a2 = causal_probabilities(heads.q[second], heads.k[second // n_rep])
        out = (a1 - lam * a2) @ value
        outputs.append(rms(out, cfg.rms_norm_eps) * (1 - lambda_init(layer_idx)))
    return torch.cat(outputs, dim=-1)


def forward(cfg, params, ids):
    """Logits [B, T, V] for token ids [B, T] at positions 0 .. T-1."""
    eps = cfg.rms_norm_eps
    positions = torch.arange(ids.shape[1])
    frequencies = rope_frequencies(cfg)
    attention = llama_attention if cfg.model_type == "llama" else diffllama_attention
    x = params["model.embed_tokens.weight"][ids]
    for l in range(cfg.num_hidden_layers):
        p = {n[len(f"model.layers.{l}."):]: t for n, t in params.items()
             if n.startswith(f"model.layers.{l}.")}
        attn = {n[len("self_attn."):]: t for n, t in p.items() if n.startswith("self_attn.")}
        h = rms(x, eps) * p["input_layernorm.weight"]
        x = x + attention(cfg, attn, h, positions, frequencies, l) @ attn["o_proj.weight"].T
        h = rms(x, eps) * p["post_attention_layernorm.weight"]
        gate, up = h @ p["mlp.gate_proj.weight"].T, h @ p["mlp.up_proj.weight"].T
        x = x + (gate * torch.sigmoid(gate) * up) @ p["mlp.down_proj.weight"].T
    head = params["model.embed_tokens.weight" if cfg.tie_word_embeddings else "lm_head.weight"]
    return (rms(x, eps) * params["model.norm.weight"]) @ head.T


def parameter_shapes(cfg):
    """Every tensor of the checkpoint as (HF name, shape), in the modules' order."""
    D, d, V, F = cfg.hidden_size, cfg.head_dim, cfg.vocab_size, cfg.intermediate_size
    H, Hkv = cfg.num_attention_heads, cfg.num_key_value_heads
    shapes = [("model.embed_tokens.weight", (V, D))]
    for l in range(cfg.num_hidden_layers):
        a = f"model.layers.{l}.self_attn."
        if cfg.model_type == "diffllama":
            shapes += [(a + n, (d,)) for n in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")]
        shapes += [(a + "q_proj.weight", (H * d, D)), (a + "k_proj.weight", (Hkv * d, D)),
                   (a + "v_proj.weight", (Hkv * d, D)), (a + "o_proj.weight", (D, H * d))]
        m = f"model.layers.{l}.mlp."
        shapes += [(m + "gate_proj.weight", (F, D)), (m + "up_proj.weight", (F, D)),
                   (m + "down_proj.weight", (D, F)),
                   (f"model.layers.{l}.input_layernorm.weight", (D,)),
                   (f"model.layers.{l}.post_attention_layernorm.weight", (D,))]
    shapes.append(("model.norm.weight", (D,)))
    if not cfg.tie_word_embeddings:
        shapes.append(("lm_head.weight", (V, D)))
    return shapes


def init_parameters(cfg, generator):
    """Random float64 parameters that exercise every path (norm gains 1 + N(0, 0.1^2), lambda
    vectors N(0, 0.1^2) as transformers initialises them, embeddings N(0, 0.3^2), linear
    weights N(0, 0.2^2)): logits O(1) and clearly non-uniform attention."""
    params = {}
    for name, shape in parameter_shapes(cfg):
        noise = torch.randn(shape, generator=generator, dtype=torch.float64)
        if name in ("model.embed_tokens.weight", "lm_head.weight"):
            params[name] = 0.3 * noise
        elif name.endswith("norm.weight"):
            params[name] = 1.0 + 0.1 * noise
        elif len(shape) == 1:
            params[name] = 0.1 * noise
        else:
            params[name] = 0.2 * noise
    return params
