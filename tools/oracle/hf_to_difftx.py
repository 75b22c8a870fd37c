"""Maps a Hugging Face Llama / DiffLlama checkpoint onto difftx's baseline / DIFF V1 model.

Written from the math of both definitions (hf_model.py's docstring, docs/SPEC.md §2.1-2.2), for the
cross-check in check_hf_model.py: the difftx oracle (model.py) run on the mapped parameters
must give the HF oracle's logits.

- Llama -> baseline: same tensors, rope_style `half` (HF's rotate-half pairs (j, j + d/2)).
- DiffLlama -> diff (V1): difftx head i (i < H/2) is HF's pair (i, i + H/2): q1 = HF q head i,
  q2 = HF q head i + H/2. It reads the keys of HF kv heads a(i) = i // n_rep and
  b(i) = (i + H/2) // n_rep and the value [v_a | v_b]. difftx shares one kv head [k1 | k2]
  and one value among n_rep' = (H/2) / Hkv' consecutive heads, so a grouping Hkv' is exact
  when (a(i), b(i)) is the same for every head of each group. With HF's Hkv even, Hkv' = Hkv/2
  is exact (kv head g = [k_g | k_(g + Hkv/2)]): no duplicated rows. With Hkv odd, Hkv' = H/2
  (one kv head per difftx head, rows duplicated) always is, and so is Hkv' = Hkv.
  The headwise norm has no gain in HF: subln.weight = ones. lambda vectors and o_proj as is;
  lambda_init "exp" is the same schedule (0.8 - 0.6 exp(-0.3 layer_idx)).
"""

import torch

import model as M


def kv_sources(hf_cfg, kv_heads):
    """[(a, b)] per difftx kv head for the grouping kv_heads, or None when it is not exact."""
    half, n_rep = hf_cfg.num_attention_heads // 2, hf_cfg.n_rep
    if kv_heads <= 0 or half % kv_heads:
        return None
    group_size = half // kv_heads
    sources = []
    for g in range(kv_heads):
        pairs = {(i // n_rep, (i + half) // n_rep) for i in range(g * group_size, (g + 1) * group_size)}
        if len(pairs) != 1:
            return None
        sources.append(pairs.pop())
    return sources


def exact_kv_groupings(hf_cfg):
    """Every difftx kv head count that represents this DiffLlama exactly."""
    half = hf_cfg.num_attention_heads // 2
    return [n for n in range(1, half + 1) if kv_sources(hf_cfg, n) is not None]


def default_kv_heads(hf_cfg):
    """Hkv / 2 when HF's Hkv is even, else one kv head per difftx head (H / 2)."""
    Hkv = hf_cfg.num_key_value_heads
    return Hkv // 2 if Hkv % 2 == 0 else hf_cfg.num_attention_heads // 2


def difftx_config(hf_cfg, kv_heads=None):
    """The docs/SPEC.md §3 config of the mapped model (kv_heads: the DIFF V1 grouping to use)."""
    diff = hf_cfg.model_type == "diffllama"
    kv_heads = kv_heads or default_kv_heads(hf_cfg)
    return M.Config.from_dict({
        "model_type": "difftx", "attention": "diff" if diff else "baseline",
        "vocab_size": hf_cfg.vocab_size, "hidden_size": hf_cfg.hidden_size,
        "num_hidden_layers": hf_cfg.num_hidden_layers,
        "num_attention_heads": hf_cfg.num_attention_heads // 2 if diff else hf_cfg.num_attention_heads,
        "num_key_value_heads": kv_heads if diff else hf_cfg.num_key_value_heads,
        "head_dim": hf_cfg.head_dim, "intermediate_size": hf_cfg.intermediate_size,
        "max_position_embeddings": hf_cfg.max_position_embeddings,
        "rope_theta": float(hf_cfg.rope_theta), "rope_style": "half",
        "rms_norm_eps": hf_cfg.rms_norm_eps, "tie_word_embeddings": hf_cfg.tie_word_embeddings,
        "lambda_init": "exp", "diff_subln": True,
    })


def _rows(weight, head, width):
    return weight[head * width:(head + 1) * width]


def _diff_attention(hf_cfg, p, sources):
    """One layer's self_attn tensors (no prefix) in the DIFF V1 layout of docs/SPEC.md §2.2."""
    d, half = hf_cfg.head_dim, hf_cfg.num_attention_heads // 2
    q, k, v = p["q_proj.weight"], p["k_proj.weight"], p["v_proj.weight"]
    out = {
        "q_proj.weight": torch.cat([torch.cat((_rows(q, i, d), _rows(q, i + half, d)))
                                    for i in range(half)]),
        "k_proj.weight": torch.cat([torch.cat((_rows(k, a, d), _rows(k, b, d))) for a, b in sources]),
        "v_proj.weight": torch.cat([torch.cat((_rows(v, a, d), _rows(v, b, d))) for a, b in sources]),
        "o_proj.weight": p["o_proj.weight"],
        "subln.weight": torch.ones(2 * d, dtype=q.dtype),
    }
    for name in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
        out[name] = p[name]
    return out


def difftx_parameters(hf_cfg, params, kv_heads=None):
    """HF-named parameters -> docs/SPEC.md §3 parameters of difftx_config(hf_cfg, kv_heads)."""
    if hf_cfg.model_type == "llama":
        return dict(params)
    kv_heads = kv_heads or default_kv_heads(hf_cfg)
    sources = kv_sources(hf_cfg, kv_heads)
    if sources is None:
        raise ValueError(f"difftx grouping of {kv_heads} kv heads does not represent "
                         f"H={hf_cfg.num_attention_heads}, Hkv={hf_cfg.num_key_value_heads} exactly")
    out = {n: t for n, t in params.items() if ".self_attn." not in n}
    for l in range(hf_cfg.num_hidden_layers):
        prefix = f"model.layers.{l}.self_attn."
        layer = {n[len(prefix):]: t for n, t in params.items() if n.startswith(prefix)}
        out.update({prefix + n: t for n, t in _diff_attention(hf_cfg, layer, sources).items()})
    return out
