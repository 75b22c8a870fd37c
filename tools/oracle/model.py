"""Reference decoder for the three difftx attention variants, written from docs/SPEC.md alone.

Plain PyTorch (1.13, CPU), no fused ops: RMSNorm, RoPE, causal softmax attention, SwiGLU
and cross-entropy are spelled out. Parameters live in a dict keyed by the docs/SPEC.md §3 names so
that the golden fixtures use exactly the names a checkpoint uses. Callers choose the dtype
(the fixtures are computed in float64).
"""

import math
from dataclasses import dataclass

import torch

ATTENTION_KINDS = ("baseline", "diff", "diff2")
ROPE_STYLES = ("interleaved", "half")
IGNORE_ID = -1

CONFIG_KEYS = (
    "model_type", "attention", "vocab_size", "hidden_size", "num_hidden_layers",
    "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size",
    "max_position_embeddings", "rope_theta", "rope_style", "rms_norm_eps",
    "tie_word_embeddings", "lambda_init", "diff_subln",
)


def default_intermediate_size(hidden_size):
    """docs/SPEC.md §1: 8/3 D rounded up to a multiple of 64."""
    return -(-8 * hidden_size // (3 * 64)) * 64


@dataclass(frozen=True)
class Config:
    """The docs/SPEC.md §3 config.json, one field per key."""
    model_type: str
    attention: str
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    max_position_embeddings: int
    rope_theta: float
    rope_style: str
    rms_norm_eps: float
    tie_word_embeddings: bool
    lambda_init: object  # "exp" or a number
    diff_subln: bool

    @staticmethod
    def from_dict(values):
        missing = [k for k in CONFIG_KEYS if k not in values]
        unknown = [k for k in values if k not in CONFIG_KEYS]
        if missing or unknown:
            raise ValueError(f"config: missing keys {missing}, unknown keys {unknown}")
        cfg = Config(**{k: values[k] for k in CONFIG_KEYS})
        cfg.validate()
        return cfg

    def to_dict(self):
        return {k: getattr(self, k) for k in CONFIG_KEYS}

    def validate(self):
        if self.model_type != "difftx":
            raise ValueError(f"config: model_type must be 'difftx', got {self.model_type!r}")
        if self.attention not in ATTENTION_KINDS:
            raise ValueError(f"config: attention must be one of {ATTENTION_KINDS}")
        if self.rope_style not in ROPE_STYLES:
            raise ValueError(f"config: rope_style must be one of {ROPE_STYLES}")
        if self.head_dim % 2:
            raise ValueError("config: head_dim must be even for RoPE")
        if self.query_heads % self.num_key_value_heads:
            raise ValueError(f"config: num_key_value_heads {self.num_key_value_heads} must "
                             f"divide the {self.query_heads} query heads")
        if self.lambda_init != "exp" and not isinstance(self.lambda_init, (int, float)):
            raise ValueError("config: lambda_init must be 'exp' or a number")

    @property
    def query_heads(self):
        """Softmax maps per kv-sharing unit: H (baseline, diff) or 2h (diff2), docs/SPEC.md §2."""
        h = self.num_attention_heads
        return 2 * h if self.attention == "diff2" else h

    @property
    def n_rep(self):
        return self.query_heads // self.num_key_value_heads


def lambda_init_for_layer(cfg, layer_index):
    """docs/SPEC.md §2.2: 0.8 - 0.6 exp(-0.3 (l - 1)) with l = layer_index + 1, or the constant."""
    if cfg.lambda_init == "exp":
        return 0.8 - 0.6 * math.exp(-0.3 * layer_index)
    return float(cfg.lambda_init)


def parameter_shapes(cfg):
    """Every parameter as (docs/SPEC.md §3 name, shape), in a fixed order."""
    D, d, V, F = cfg.hidden_size, cfg.head_dim, cfg.vocab_size, cfg.intermediate_size
    H, Hkv = cfg.num_attention_heads, cfg.num_key_value_heads
    if cfg.attention == "baseline":
        q_out, k_out, v_out, o_in = H * d, Hkv * d, Hkv * d, H * d
    elif cfg.attention == "diff":
        q_out, k_out, v_out, o_in = 2 * H * d, 2 * Hkv * d, Hkv * 2 * d, H * 2 * d
    else:
        q_out, k_out, v_out, o_in = 2 * H * d, Hkv * d, Hkv * d, H * d

    shapes = [("model.embed_tokens.weight", (V, D))]
    for l in range(cfg.num_hidden_layers):
        p = f"model.layers.{l}."
        a = p + "self_attn."
        shapes += [
            (p + "input_layernorm.weight", (D,)),
            (a + "q_proj.weight", (q_out, D)),
            (a + "k_proj.weight", (k_out, D)),
            (a + "v_proj.weight", (v_out, D)),
            (a + "o_proj.weight", (D, o_in)),
        ]
        if cfg.attention == "diff":
            shapes += [(a + n, (d,)) for n in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")]
            if cfg.diff_subln:
                shapes.append((a + "subln.weight", (2 * d,)))
        if cfg.attention == "diff2":
            shapes.append((a + "lambda_proj.weight", (H, D)))
        shapes += [
            (p + "post_attention_layernorm.weight", (D,)),
            (p + "mlp.gate_proj.weight", (F, D)),
            (p + "mlp.up_proj.weight", (F, D)),
            (p + "mlp.down_proj.weight", (D, F)),
        ]
    shapes.append(("model.norm.weight", (D,)))
    if not cfg.tie_word_embeddings:
        shapes.append(("lm_head.weight", (V, D)))
    return shapes


def init_parameters(cfg, generator, dtype=torch.float64, linear_std=0.2, embed_std=0.3,
                    gain_std=0.1, lambda_std=0.1):
    """Random parameters that exercise every path: gains 1 + N(0, gain_std), not all ones.

    Values are rounded through float32 so that a float32 file holds them exactly.
    """
    params = {}
    for name, shape in parameter_shapes(cfg):
        noise = torch.randn(shape, generator=generator, dtype=torch.float64)
        if name.endswith("embed_tokens.weight") or name == "lm_head.weight":
            value = embed_std * noise
        elif name.endswith(("layernorm.weight", "norm.weight", "subln.weight")):
            value = 1.0 + gain_std * noise
        elif len(shape) == 1:  # lambda_q1, lambda_k1, lambda_q2, lambda_k2
            value = lambda_std * noise
        else:
            value = linear_std * noise
        params[name] = value.to(torch.float32).to(dtype)
    return params


def rms_norm(x, gain, eps):
    """docs/SPEC.md §1: x / sqrt(mean(x^2) + eps) * g over the last axis."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gain


def rope_tables(seq_len, head_dim, theta, dtype):
    """cos and sin [T, d/2]: pair i at position t turns by t * theta^(-2i/d)."""
    inv_freq = theta ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rope(x, cos, sin, style):
    """Rotate x [..., T, d]. interleaved pairs (2i, 2i+1); half pairs (i, i + d/2) (docs/SPEC.md §1)."""
    if style == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)


def causal_softmax(scores):
    """Row softmax of scores [..., T, T] with keys after the query masked out."""
    T = scores.shape[-1]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)


def split_heads(x, n_heads):
    """[B, T, n*w] -> [B, n, T, w]."""
    B, T, _ = x.shape
    return x.view(B, T, n_heads, -1).transpose(1, 2)


def merge_heads(x):
    """[B, n, T, w] -> [B, T, n*w]."""
    B, n, T, w = x.shape
    return x.transpose(1, 2).reshape(B, T, n * w)


def share_kv(x, n_rep):
    """[B, Hkv, T, w] -> [B, Hkv*n_rep, T, w] so that query head i reads kv head i // n_rep."""
    return x.repeat_interleave(n_rep, dim=1)


def attention_baseline(cfg, p, x, rope):
    """docs/SPEC.md §2.1. Returns the per-head outputs [B, H, T, d] before o_proj."""
    d = cfg.head_dim
    q = apply_rope(split_heads(x @ p["q_proj.weight"].T, cfg.num_attention_heads), *rope)
    k = apply_rope(split_heads(x @ p["k_proj.weight"].T, cfg.num_key_value_heads), *rope)
    v = split_heads(x @ p["v_proj.weight"].T, cfg.num_key_value_heads)
    k, v = share_kv(k, cfg.n_rep), share_kv(v, cfg.n_rep)
    return causal_softmax(q @ k.transpose(-1, -2) / math.sqrt(d)) @ v, {}


def diff_lambda(p, lambda_init):
    """docs/SPEC.md §2.2 (paper Eq. 2): exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init."""
    return (torch.exp(torch.dot(p["lambda_q1"], p["lambda_k1"]))
            - torch.exp(torch.dot(p["lambda_q2"], p["lambda_k2"])) + lambda_init)


def attention_diff(cfg, p, x, rope, layer_index):
    """docs/SPEC.md §2.2 (paper Eq. 1-3). Returns the per-head outputs [B, H, T, 2d] before o_proj.

    q_proj columns are [q1 | q2] per head and k_proj columns [k1 | k2] per kv head; the split
    happens before the kv heads are shared, so q1 of head i meets k1 of group i // n_rep.
    """
    d, H, Hkv = cfg.head_dim, cfg.num_attention_heads, cfg.num_key_value_heads
    q = split_heads(x @ p["q_proj.weight"].T, 2 * H)    # [B, 2H, T, d]: q1_0, q2_0, q1_1, ...
    k = split_heads(x @ p["k_proj.weight"].T, 2 * Hkv)  # [B, 2Hkv, T, d]: k1_0, k2_0, ...
    v = split_heads(x @ p["v_proj.weight"].T, Hkv)      # [B, Hkv, T, 2d]
    q1, q2 = apply_rope(q[:, 0::2], *rope), apply_rope(q[:, 1::2], *rope)
    k1, k2 = apply_rope(k[:, 0::2], *rope), apply_rope(k[:, 1::2], *rope)
    k1, k2, v = share_kv(k1, cfg.n_rep), share_kv(k2, cfg.n_rep), share_kv(v, cfg.n_rep)

    scale = 1.0 / math.sqrt(d)  # sub-head width d, not 2d
    a1 = causal_softmax(q1 @ k1.transpose(-1, -2) * scale)
    a2 = causal_softmax(q2 @ k2.transpose(-1, -2) * scale)
    lambda_init = lambda_init_for_layer(cfg, layer_index)
    lam = diff_lambda(p, lambda_init)
    heads = (a1 - lam * a2) @ v
    if cfg.diff_subln:  # Eq. 3: headwise RMSNorm over 2d with a shared gain, then (1 - lambda_init)
        heads = rms_norm(heads, p["subln.weight"], cfg.rms_norm_eps) * (1.0 - lambda_init)
    return heads, {"lambda": lam}


def attention_diff2(cfg, p, x, rope):
    """docs/SPEC.md §2.3. Returns the per-head outputs [B, h, T, d] before o_proj.

    2h query heads over Hkv kv heads; output head i is a_{2i} - sigmoid(lambda_proj(x))_i a_{2i+1},
    with x the normalised attention input (the same x that q_proj reads).
    """
    d = cfg.head_dim
    q = apply_rope(split_heads(x @ p["q_proj.weight"].T, cfg.query_heads), *rope)
    k = apply_rope(split_heads(x @ p["k_proj.weight"].T, cfg.num_key_value_heads), *rope)
    v = split_heads(x @ p["v_proj.weight"].T, cfg.num_key_value_heads)
    k, v = share_kv(k, cfg.n_rep), share_kv(v, cfg.n_rep)
    a = causal_softmax(q @ k.transpose(-1, -2) / math.sqrt(d)) @ v   # [B, 2h, T, d]
    lam = torch.sigmoid(x @ p["lambda_proj.weight"].T)              # [B, T, h]
    heads = a[:, 0::2] - lam.transpose(1, 2).unsqueeze(-1) * a[:, 1::2]
    return heads, {"lambda": lam}


def attention_heads(cfg, p, x, rope, layer_index):
    """Dispatch on cfg.attention; p holds one layer's self_attn.* parameters without prefix."""
    if cfg.attention == "baseline":
        return attention_baseline(cfg, p, x, rope)
    if cfg.attention == "diff":
        return attention_diff(cfg, p, x, rope, layer_index)
    return attention_diff2(cfg, p, x, rope)


def layer_params(params, prefix):
    return {name[len(prefix):]: t for name, t in params.items() if name.startswith(prefix)}


def swiglu(x, p):
    """docs/SPEC.md §1: (silu(x Wg^T) * (x Wu^T)) Wd^T."""
    gate = x @ p["mlp.gate_proj.weight"].T
    return (gate * torch.sigmoid(gate) * (x @ p["mlp.up_proj.weight"].T)) @ p["mlp.down_proj.weight"].T


def forward(cfg, params, ids):
    """Logits [B, T, V] for token ids [B, T], plus per-layer extras (the lambdas)."""
    eps = cfg.rms_norm_eps
    x = params["model.embed_tokens.weight"][ids]
    dtype = x.dtype
    rope = (*rope_tables(ids.shape[1], cfg.head_dim, cfg.rope_theta, dtype), cfg.rope_style)
    extras = []
    for l in range(cfg.num_hidden_layers):
        p = layer_params(params, f"model.layers.{l}.")
        attn = layer_params(p, "self_attn.")
        heads, extra = attention_heads(cfg, attn, rms_norm(x, p["input_layernorm.weight"], eps),
                                       rope, l)
        x = x + merge_heads(heads) @ attn["o_proj.weight"].T                # paper Eq. 4
        x = x + swiglu(rms_norm(x, p["post_attention_layernorm.weight"], eps), p)  # Eq. 5
        extras.append(extra)
    head = params["model.embed_tokens.weight" if cfg.tie_word_embeddings else "lm_head.weight"]
    logits = rms_norm(x, params["model.norm.weight"], eps) @ head.T
    return logits, extras


def cross_entropy(logits, targets):
    """Mean of -log softmax(logits)[target] over the targets that are not IGNORE_ID."""
    counted = targets != IGNORE_ID
    picked = logits.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    per_token = torch.logsumexp(logits, dim=-1) - picked
    return (per_token * counted).sum() / counted.sum()


def loss_of(cfg, params, ids, targets):
    return cross_entropy(forward(cfg, params, ids)[0], targets)
