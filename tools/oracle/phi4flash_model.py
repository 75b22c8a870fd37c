"""Phi-4-mini-flash (Phi4FlashForCausalLM, the SambaY hybrid) in float64 numpy, written from the math.

A fourth oracle beside model.py, hf_model.py and motif_model.py. Written from the semantics of
the public code (vLLM's phi4flash.py before its removal, microsoft/ArchScale's lit_gpt,
TensorRT-LLM's auto_deploy modeling_phi4flash.py and the config class copies), none of it
copied; docs/MODEL.md "SambaY" and docs/FORMATS.md "Phi-4-mini-flash" say what was assumed where
they differ. numpy only, like motif_model.py, so that its checks run wherever numpy does.

The model (D hidden, L layers with h = L / 2, H heads of width d = D / H, Hkv key/value heads,
E = mamba_expand D Mamba channels, S = mamba_d_state, K = mamba_d_conv, R = mamba_dt_rank):
- Every layer: x += mixer(LN1(x)); x += fc2(up * silu(gate)), [gate | up] = fc1(LN2(x)).
  LN is LayerNorm with a bias (eps layer_norm_eps); fc1 / fc2 have no bias. A final LayerNorm,
  then the head (the embedding when tied). No positional encoding anywhere.
- Mixers by layer index l (mb_per_layer = 2): even l < h Mamba-1; l = h Mamba-1 that also
  hands on its memory (the scan output y with the D skip, before the silu(z) gate); odd l < h
  differential attention over the last `sliding_window` keys (the current one included);
  l = h + 1 full causal differential attention whose keys and values the layers above reuse;
  even l >= h + 2 GMU, out_proj(memory * silu(in_proj(x))); odd l >= h + 2 cross-attention:
  Wqkv gives only queries, keys and values are layer h + 1's.
- Differential attention: Wqkv (with bias) gives [q | k | v] with H, Hkv, Hkv heads of width d.
  Heads split "(H two) D": q1 = even heads, q2 = odd heads (likewise k and v). Pair-head i
  reads key/value pair g = i // ((H/2) / (Hkv/2)): A1 = softmax(q1_i k1_g^T / sqrt(d)),
  A2 = softmax(q2_i k2_g^T / sqrt(d)), o_i = (A1 - lambda A2) [v1_g | v2_g] (2d wide), then
  RMSNorm over the 2d features (eps 1e-5, gain subln) times (1 - lambda_init); out_proj (with
  bias) reads the pair-heads' outputs side by side. lambda = exp(lq1 . lk1) - exp(lq2 . lk2)
  + lambda_init, lambda_init = 0.8 - 0.6 exp(-0.3 l) with l the absolute 0-based layer index
  (Mamba and GMU layers counted).
- Mamba-1: [x | z] = in_proj(h); x <- silu(causal depthwise conv1d over time, K taps, bias);
  [dt_in | B | C] = x_proj(x) (R, S, S columns); dt = softplus(dt_proj(dt_in) + bias);
  A = -exp(A_log) [E, S]; state s_t = exp(dt_t A) s_{t-1} + dt_t B_t x_t (per channel);
  y_t = C_t . s_t + D x_t; out_proj(y * silu(z)). No biases on in_proj / out_proj.

Both a parallel form (whole sequence: masked score matrices, a full convolution, the scan as a
sum over earlier positions with cumulative dt) and a recurrent form (token by token: key/value
caches, a rolling conv window, the SSM state) are here; check_phi4flash_model.py checks one
against the other.
"""

import json
import math
import os
from dataclasses import dataclass

import numpy as np

from safetensors_io import read_safetensors_arrays

ARCHITECTURE = "Phi4FlashForCausalLM"
MODEL_TYPE = "phi4flash"
SUBLN_EPS = 1e-5  # fixed in every source (nn.RMSNorm(2 * head_dim, eps=1e-5)), not read from the config
INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"

# Keys that do not change the forward pass.
HARMLESS_KEYS = {"architectures", "auto_map", "model_type", "torch_dtype", "transformers_version", "use_cache",
                 "initializer_range", "bos_token_id", "eos_token_id", "pad_token_id", "resid_pdrop", "embd_pdrop",
                 "attention_dropout", "max_position_embeddings", "rope_theta", "_name_or_path",
                 "_attn_implementation"}
MATH_KEYS = {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
             "num_key_value_heads", "hidden_act", "layer_norm_eps", "tie_word_embeddings", "sliding_window",
             "mb_per_layer", "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_dt_rank", "mamba_conv_bias",
             "mamba_proj_bias", "mlp_bias", "lm_head_bias"}


@dataclass(frozen=True)
class Phi4FlashConfig:
    """The config.json keys that change the math, with the config class's defaults."""
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    layer_norm_eps: float
    sliding_window: int
    mamba_d_state: int
    mamba_d_conv: int
    mamba_expand: int
    mamba_dt_rank: int
    tie_word_embeddings: bool

    @staticmethod
    def from_dict(values):
        """Reads a Phi4Flash config.json dict; refuses what this oracle does not model, by name."""
        if values.get("architectures") not in (None, [ARCHITECTURE]):
            raise ValueError(f"config: architectures {values['architectures']!r} is not [{ARCHITECTURE!r}]")
        if values.get("model_type") != MODEL_TYPE:
            raise ValueError(f"config: model_type {values.get('model_type')!r} is not {MODEL_TYPE!r}")
        unknown = sorted(set(values) - HARMLESS_KEYS - MATH_KEYS)
        if unknown:
            raise ValueError(f"config: keys {unknown} are not modelled")
        for key, only in (("hidden_act", "silu"), ("mb_per_layer", 2), ("mamba_conv_bias", True),
                          ("mamba_proj_bias", False), ("mlp_bias", False), ("lm_head_bias", False)):
            if values.get(key, only) != only:
                raise ValueError(f"config: {key} {values[key]!r} is not modelled (only {only!r})")
        for key in ("resid_pdrop", "embd_pdrop", "attention_dropout"):
            if values.get(key, 0) != 0:
                raise ValueError(f"config: {key} must be 0 at inference")
        hidden = values["hidden_size"]
        dt_rank = values.get("mamba_dt_rank", "auto")
        cfg = Phi4FlashConfig(
            vocab_size=values["vocab_size"],
            hidden_size=hidden,
            intermediate_size=values["intermediate_size"],
            num_hidden_layers=values["num_hidden_layers"],
            num_attention_heads=values["num_attention_heads"],
            num_key_value_heads=values.get("num_key_value_heads", 4),  # the config class's default
            layer_norm_eps=values.get("layer_norm_eps", 1e-5),
            sliding_window=values.get("sliding_window", 2047),
            mamba_d_state=values.get("mamba_d_state", 16),
            mamba_d_conv=values.get("mamba_d_conv", 4),
            mamba_expand=values.get("mamba_expand", 2),
            mamba_dt_rank=math.ceil(hidden / 16) if dt_rank == "auto" else dt_rank,
            tie_word_embeddings=values.get("tie_word_embeddings", True),
        )
        cfg.validate()
        return cfg

    def validate(self):
        L, H, Hkv = self.num_hidden_layers, self.num_attention_heads, self.num_key_value_heads
        if L % 4:
            raise ValueError(f"config: num_hidden_layers {L} must be a multiple of 4 (SambaY with YOCO)")
        if self.hidden_size % H:
            raise ValueError(f"config: num_attention_heads {H} must divide hidden_size {self.hidden_size}")
        if H % 2 or Hkv % 2 or (H // 2) % (Hkv // 2):
            raise ValueError(f"config: heads {H} and kv heads {Hkv} must be even, the kv pairs dividing the pairs")
        if not isinstance(self.mamba_dt_rank, int) or self.mamba_dt_rank < 1:
            raise ValueError(f"config: mamba_dt_rank {self.mamba_dt_rank!r} must be 'auto' or a positive integer")
        if self.sliding_window < 1:
            raise ValueError(f"config: sliding_window {self.sliding_window} must be positive")

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads

    @property
    def d_inner(self):
        return self.mamba_expand * self.hidden_size

    @property
    def half(self):
        return self.num_hidden_layers // 2

    @property
    def pairs_per_kv_pair(self):
        return (self.num_attention_heads // 2) // (self.num_key_value_heads // 2)


def layer_kind(cfg, layer):
    """mamba, memory_mamba, sliding_attention, full_attention, gmu or cross_attention."""
    h = cfg.half
    if layer < h:
        return "mamba" if layer % 2 == 0 else "sliding_attention"
    if layer == h:
        return "memory_mamba"
    if layer == h + 1:
        return "full_attention"
    return "gmu" if layer % 2 == 0 else "cross_attention"


def lambda_init(layer):
    """0.8 - 0.6 exp(-0.3 l), l the absolute 0-based layer index."""
    return 0.8 - 0.6 * math.exp(-0.3 * layer)


def layer_lambda(p, layer):
    """exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init, p an attention layer's tensors."""
    lam = {n: p["inner_cross_attn." + n] for n in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")}
    return (math.exp(float(lam["lambda_q1"] @ lam["lambda_k1"]))
            - math.exp(float(lam["lambda_q2"] @ lam["lambda_k2"])) + lambda_init(layer))


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    return centred / np.sqrt((centred * centred).mean(-1, keepdims=True) + eps) * weight + bias


def rms(x, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)


def silu(x):
    return x / (1.0 + np.exp(-x))


def softplus(x):
    return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))


def softmax(scores):
    scores = scores - scores.max(-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(-1, keepdims=True)


def layer_params(params, layer, module):
    prefix = f"model.layers.{layer}.{module}."
    return {n[len(prefix):]: t for n, t in params.items() if n.startswith(prefix)}


def split_qkv(cfg, p, x, cross):
    """Wqkv x + bias split into q [T, H, d] and (self-attention) k, v [T, Hkv, d]."""
    H, Hkv, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
    qkv = x @ p["Wqkv.weight"].T + p["Wqkv.bias"]
    q = qkv[..., :H * d].reshape(*x.shape[:-1], H, d)
    if cross:
        return q, None, None
    k = qkv[..., H * d:(H + Hkv) * d].reshape(*x.shape[:-1], Hkv, d)
    v = qkv[..., (H + Hkv) * d:].reshape(*x.shape[:-1], Hkv, d)
    return q, k, v


def pair_head_output(cfg, p, layer, a1, a2, v1, v2):
    """(A1 - lambda A2) [v1 | v2], normalised over its 2d features, times (1 - lambda_init)."""
    lam = layer_lambda(p, layer)
    out = np.concatenate((a1 @ v1 - lam * (a2 @ v1), a1 @ v2 - lam * (a2 @ v2)), axis=-1)
    return rms(out, SUBLN_EPS) * p["inner_cross_attn.subln.weight"] * (1 - lambda_init(layer))


def visible(T, window):
    """[T, T] mask of the keys query t sees: s <= t, and t - s < window when windowed."""
    t, s = np.arange(T)[:, None], np.arange(T)[None, :]
    return (s <= t) & ((t - s < window) if window else True)


def attention(cfg, p, layer, q, k, v, window):
    """Differential attention of one sequence, pair-head by pair-head: out_proj's output [T, D].
    q [T, H, d]; k, v [T, Hkv, d] (a cross-attention layer passes layer h + 1's)."""
    T, d = q.shape[0], cfg.head_dim
    mask = visible(T, window)
    outputs = []
    for i in range(cfg.num_attention_heads // 2):
        g = i // cfg.pairs_per_kv_pair
        maps = []
        for half in (0, 1):  # q1 with k1, q2 with k2
            scores = q[:, 2 * i + half] @ k[:, 2 * g + half].T / math.sqrt(d)
            maps.append(softmax(np.where(mask, scores, -np.inf)))
        outputs.append(pair_head_output(cfg, p, layer, maps[0], maps[1], v[:, 2 * g], v[:, 2 * g + 1]))
    return np.concatenate(outputs, axis=-1) @ p["out_proj.weight"].T + p["out_proj.bias"]


def causal_conv(x, weight, bias):
    """Depthwise causal conv1d over time: out[t, c] = bias[c] + sum_j weight[c, 0, j] x[t - K + 1 + j, c]
    (zeros before the sequence). x [T, E], weight [E, 1, K]."""
    T, K = x.shape[0], weight.shape[-1]
    padded = np.concatenate((np.zeros((K - 1, x.shape[1]), dtype=x.dtype), x), axis=0)
    return bias + sum(weight[:, 0, j] * padded[j:j + T] for j in range(K))


def ssm_inputs(cfg, p, u):
    """dt [T, E] (after softplus), B and C [T, S] from the conv output u [T, E]."""
    R, S = cfg.mamba_dt_rank, cfg.mamba_d_state
    dbc = u @ p["x_proj.weight"].T
    dt = softplus(dbc[:, :R] @ p["dt_proj.weight"].T + p["dt_proj.bias"])
    return dt, dbc[:, R:R + S], dbc[:, R + S:]


def scan_parallel(p, u, dt, B, C):
    """The selective scan as a sum over earlier positions: y[t, c] = D[c] u[t, c] + sum_{s <= t}
    sum_n C[t, n] exp(A[c, n] (cum_t - cum_s)) B[s, n] dt[s, c] u[s, c], cum the running sum of dt."""
    A = -np.exp(p["A_log"])                                     # [E, S]
    cum = np.cumsum(dt, axis=0)                                  # [T, E]
    T = u.shape[0]
    exponent = A[None, None] * (cum[:, None, :, None] - cum[None, :, :, None])  # [t, s, E, S]
    decay = np.exp(np.where(np.tril(np.ones((T, T), dtype=bool))[:, :, None, None], exponent, -np.inf))
    y = np.einsum("tn,tsen,sn,se->te", C, decay, B, dt * u)
    return y + p["D"] * u


def mamba(cfg, p, x):
    """Mamba-1 over one sequence x [T, D]: (out_proj output [T, D], memory y [T, E])."""
    E = cfg.d_inner
    xz = x @ p["in_proj.weight"].T
    u = silu(causal_conv(xz[:, :E], p["conv1d.weight"], p["conv1d.bias"]))
    y = scan_parallel(p, u, *ssm_inputs(cfg, p, u))
    return (y * silu(xz[:, E:])) @ p["out_proj.weight"].T, y


def gmu(p, x, memory):
    return (memory * silu(x @ p["in_proj.weight"].T)) @ p["out_proj.weight"].T


def mlp(params, layer, h):
    """fc2(up * silu(gate)), [gate | up] = fc1(h)."""
    p = layer_params(params, layer, "mlp")
    gate, up = np.split(h @ p["fc1.weight"].T, 2, axis=-1)
    return (up * silu(gate)) @ p["fc2.weight"].T


def norm(cfg, params, name, x):
    return layer_norm(x, params[name + ".weight"], params[name + ".bias"], cfg.layer_norm_eps)


def lm_head(cfg, params, x):
    head = params["model.embed_tokens.weight" if cfg.tie_word_embeddings else "lm_head.weight"]
    return norm(cfg, params, "model.final_layernorm", x) @ head.T


def forward_sequence(cfg, params, ids):
    """Logits [T, V] of one sequence, the whole sequence at once (the parallel form)."""
    x = params["model.embed_tokens.weight"][np.asarray(ids)]
    memory, shared_kv = None, None
    for layer in range(cfg.num_hidden_layers):
        kind, p = layer_kind(cfg, layer), layer_params(params, layer, "attn")
        h = norm(cfg, params, f"model.layers.{layer}.input_layernorm", x)
        if kind in ("mamba", "memory_mamba"):
            out, y = mamba(cfg, p, h)
            memory = y if kind == "memory_mamba" else memory
        elif kind == "gmu":
            out = gmu(p, h, memory)
        else:
            cross = kind == "cross_attention"
            q, k, v = split_qkv(cfg, p, h, cross)
            if kind == "full_attention":
                shared_kv = (k, v)
            if cross:
                k, v = shared_kv
            window = cfg.sliding_window if kind == "sliding_attention" else 0
            out = attention(cfg, p, layer, q, k, v, window)
        x = x + out
        x = x + mlp(params, layer, norm(cfg, params, f"model.layers.{layer}.post_attention_layernorm", x))
    return lm_head(cfg, params, x)


def forward(cfg, params, ids):
    """Logits [B, T, V] for token ids [B, T]."""
    return np.stack([forward_sequence(cfg, params, row) for row in np.asarray(ids)])


class State:
    """What the recurrent form carries from one token to the next: per attention layer its keys
    and values so far (a sliding layer keeps only the last `sliding_window`), per Mamba layer its
    last K - 1 conv inputs and its SSM state [E, S]."""

    def __init__(self, cfg):
        L, E, K, S = cfg.num_hidden_layers, cfg.d_inner, cfg.mamba_d_conv, cfg.mamba_d_state
        self.keys, self.values = [None] * L, [None] * L
        self.conv = [np.zeros((K - 1, E)) for _ in range(L)]
        self.ssm = [np.zeros((E, S)) for _ in range(L)]


def attention_step(cfg, p, layer, q, k, v):
    """Differential attention of one query [H, d] against cached keys and values [n, Hkv, d]."""
    d = cfg.head_dim
    outputs = []
    for i in range(cfg.num_attention_heads // 2):
        g = i // cfg.pairs_per_kv_pair
        a1 = softmax(k[:, 2 * g] @ q[2 * i] / math.sqrt(d))[None]
        a2 = softmax(k[:, 2 * g + 1] @ q[2 * i + 1] / math.sqrt(d))[None]
        outputs.append(pair_head_output(cfg, p, layer, a1, a2, v[:, 2 * g], v[:, 2 * g + 1])[0])
    return np.concatenate(outputs) @ p["out_proj.weight"].T + p["out_proj.bias"]


def mamba_step(cfg, p, x, state, layer):
    """One token x [D] through Mamba-1: (out [D], y [E]); advances the conv window and the state."""
    E = cfg.d_inner
    xz = p["in_proj.weight"] @ x
    window = np.concatenate((state.conv[layer], xz[None, :E]), axis=0)  # [K, E], oldest first
    state.conv[layer] = window[1:]
    u = silu(p["conv1d.bias"] + (p["conv1d.weight"][:, 0, :].T * window).sum(0))
    dt, B, C = (a[0] for a in ssm_inputs(cfg, p, u[None]))
    A = -np.exp(p["A_log"])
    state.ssm[layer] = np.exp(dt[:, None] * A) * state.ssm[layer] + (dt * u)[:, None] * B[None]
    y = state.ssm[layer] @ C + p["D"] * u
    return p["out_proj.weight"] @ (y * silu(xz[E:])), y


def step(cfg, params, token, state):
    """Logits [V] of the next token, the previous ones held in `state` (the recurrent form)."""
    x = params["model.embed_tokens.weight"][token]
    memory, h1 = None, cfg.half + 1
    for layer in range(cfg.num_hidden_layers):
        kind, p = layer_kind(cfg, layer), layer_params(params, layer, "attn")
        h = norm(cfg, params, f"model.layers.{layer}.input_layernorm", x)
        if kind in ("mamba", "memory_mamba"):
            out, y = mamba_step(cfg, p, h, state, layer)
            memory = y if kind == "memory_mamba" else memory
        elif kind == "gmu":
            out = gmu(p, h, memory)
        else:
            q, k, v = split_qkv(cfg, p, h, kind == "cross_attention")
            if kind != "cross_attention":
                keys = k[None] if state.keys[layer] is None else np.concatenate((state.keys[layer], k[None]))
                values = v[None] if state.values[layer] is None else np.concatenate((state.values[layer], v[None]))
                if kind == "sliding_attention":  # older keys fall out of the window for good
                    keys, values = keys[-cfg.sliding_window:], values[-cfg.sliding_window:]
                state.keys[layer], state.values[layer] = keys, values
            out = attention_step(cfg, p, layer, q, state.keys[layer if kind != "cross_attention" else h1],
                                 state.values[layer if kind != "cross_attention" else h1])
        x = x + out
        x = x + mlp(params, layer, norm(cfg, params, f"model.layers.{layer}.post_attention_layernorm", x))
    return lm_head(cfg, params, x)


def decode(cfg, params, ids):
    """Logits [B, T, V] computed token by token (the recurrent form)."""
    rows = []
    for row in np.asarray(ids):
        state = State(cfg)
        rows.append(np.stack([step(cfg, params, int(t), state) for t in row]))
    return np.stack(rows)


def parameter_shapes(cfg):
    """Every tensor of a Phi4FlashForCausalLM checkpoint as (name, shape), in the modules' order."""
    D, V, F, E = cfg.hidden_size, cfg.vocab_size, cfg.intermediate_size, cfg.d_inner
    H, Hkv, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
    S, K, R = cfg.mamba_d_state, cfg.mamba_d_conv, cfg.mamba_dt_rank
    shapes = [("model.embed_tokens.weight", (V, D))]
    for layer in range(cfg.num_hidden_layers):
        kind, a = layer_kind(cfg, layer), f"model.layers.{layer}.attn."
        if kind in ("mamba", "memory_mamba"):
            shapes += [(a + "in_proj.weight", (2 * E, D)), (a + "conv1d.weight", (E, 1, K)), (a + "conv1d.bias", (E,)),
                       (a + "x_proj.weight", (R + 2 * S, E)), (a + "dt_proj.weight", (E, R)), (a + "dt_proj.bias", (E,)),
                       (a + "A_log", (E, S)), (a + "D", (E,)), (a + "out_proj.weight", (D, E))]
        elif kind == "gmu":
            shapes += [(a + "in_proj.weight", (E, D)), (a + "out_proj.weight", (D, E))]
        else:
            rows = H * d if kind == "cross_attention" else (H + 2 * Hkv) * d
            shapes += [(a + "Wqkv.weight", (rows, D)), (a + "Wqkv.bias", (rows,)),
                       (a + "out_proj.weight", (D, H * d)), (a + "out_proj.bias", (D,))]
            shapes += [(a + "inner_cross_attn." + n, (d,)) for n in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")]
            shapes.append((a + "inner_cross_attn.subln.weight", (2 * d,)))
        m, n = f"model.layers.{layer}.mlp.", f"model.layers.{layer}."
        shapes += [(m + "fc1.weight", (2 * F, D)), (m + "fc2.weight", (D, F)),
                   (n + "input_layernorm.weight", (D,)), (n + "input_layernorm.bias", (D,)),
                   (n + "post_attention_layernorm.weight", (D,)), (n + "post_attention_layernorm.bias", (D,))]
    shapes += [("model.final_layernorm.weight", (D,)), ("model.final_layernorm.bias", (D,))]
    if not cfg.tie_word_embeddings:
        shapes.append(("lm_head.weight", (V, D)))
    return shapes


def keeps_float32(name):
    """Tensors a BF16 checkpoint keeps in F32 (the sources create them as float32 parameters)."""
    return name.endswith((".A_log", ".D")) or ".lambda_" in name


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
    """(Phi4FlashConfig, {name: float64 array}): every tensor the config needs, of its shape, no other."""
    with open(os.path.join(directory, "config.json")) as f:
        cfg = Phi4FlashConfig.from_dict(json.load(f))
    tensors = _read_tensors(directory)
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
    matrices N(0, 0.2^2), conv taps N(0, 0.4^2), norm gains and D 1 + N(0, 0.1^2), biases and
    lambda vectors N(0, 0.1^2); A_log = log(1 .. S) + N(0, 0.1^2) per channel (Mamba's init with
    noise) and dt_proj.bias the inverse softplus of dt drawn log-uniformly in [0.02, 0.5], so
    that the state both remembers and forgets within a fixture's dozen tokens."""
    params = {}
    for name, shape in parameter_shapes(cfg):
        noise = rng.standard_normal(shape)
        if name in ("model.embed_tokens.weight", "lm_head.weight"):
            params[name] = 0.3 * noise
        elif name.endswith((".A_log",)):
            params[name] = np.log(np.arange(1, shape[1] + 1))[None, :] + 0.1 * noise
        elif name.endswith(".dt_proj.bias"):
            dt = np.exp(rng.uniform(math.log(0.02), math.log(0.5), shape))
            params[name] = dt + np.log(-np.expm1(-dt))
        elif name.endswith((".D", "norm.weight", "subln.weight")):
            params[name] = 1.0 + 0.1 * noise
        elif name.endswith(".conv1d.weight"):
            params[name] = 0.4 * noise
        elif len(shape) == 1:
            params[name] = 0.1 * noise
        else:
            params[name] = 0.2 * noise
    return params
