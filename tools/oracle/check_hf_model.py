"""Self-checks of the Hugging Face oracle (hf_model.py), run by make_hf_fixtures.py first.

- BF16 / F16 storage: rounding (ties to even), bit patterns, write/read round trip.
- RoPE scaling: `linear` equals the default rotation at positions t / factor; `llama3` on
  Llama 3.2 1B's own rope_scaling puts pairs 0-14 in the unchanged band, 15-17 in the blend
  and 18-31 in the divided one (counted by hand below), and the blend meets both neighbours.
- Causality of the whole model.
- DiffLlama's head-by-head loop equals the same attention written as whole-tensor steps (GQA
  repeat, value halves joined along the features and repeated, output halves subtracted).
- DiffLlama head pairing by perturbation: query head j moves only pair j mod H/2; key or
  value head g moves exactly the pairs i with i // n_rep == g or (i + H/2) // n_rep == g.
- Cross-check against the independent difftx oracle (model.py): every fixture config (with its
  rope_scaling dropped, which model.py does not have) through hf_to_difftx gives the same
  float64 logits, for every exact DIFF V1 kv grouping; a wrong pairing (adjacent maps, as
  DIFF V2 pairs them) does not, so the comparison can fail.
Run alone with `/usr/bin/python3 tools/oracle/check_hf_model.py`.
"""

import dataclasses
import math
import os
import struct
import tempfile

import torch

import hf_model as HF
import hf_to_difftx
import model as M
from safetensors_io import read_safetensors, round_to_storage, write_safetensors

CROSS_CHECK_TOL = 1e-11  # float64 logits of O(1); two summation orders differ by ~1e-15
LLAMA3_SMALL = {"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0,
                "high_freq_factor": 2.0, "original_max_position_embeddings": 16}


def _max_err(a, b):
    return (a - b).abs().max().item()


def _hf_config(**overrides):
    values = {"model_type": "diffllama", "vocab_size": 23, "hidden_size": 16, "intermediate_size": 24,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "head_dim": 4, "max_position_embeddings": 32, "rope_theta": 100.0,
              "rms_norm_eps": 1e-5, "tie_word_embeddings": True, "rope_scaling": None}
    values.update(overrides)
    return HF.HFConfig.from_dict(values)


def check_half_precision_storage():
    """BF16 and F16 written and read back give round_to_storage's values; known bit patterns."""
    values = torch.tensor([1.0, -2.0, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 0.1], dtype=torch.float64)
    # BF16 keeps 8 significant bits: 1 + 2^-8 is a tie, rounds to even (1.0); 1 + 3*2^-8 -> 1 + 2^-6.
    assert round_to_storage("BF16", values).tolist()[:4] == [1.0, -2.0, 1.0, 1.0 + 2 ** -6], "BF16 rounding"
    assert round_to_storage("F16", values).tolist()[:4] == values.tolist()[:4], "F16 holds 11 bits"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.safetensors")
        write_safetensors(path, {"b": ("BF16", values), "h": ("F16", values)})
        with open(path, "rb") as f:
            blob = f.read()
        back, _ = read_safetensors(path)
    header_len = struct.unpack("<Q", blob[:8])[0]
    assert blob[8 + header_len:8 + header_len + 4] == bytes([0x80, 0x3F, 0x00, 0xC0]), "BF16 bits of 1, -2"
    for name, tag in (("b", "BF16"), ("h", "F16")):
        assert torch.equal(back[name].double(), round_to_storage(tag, values)), f"{tag} round trip"


def check_linear_rope():
    cfg = _hf_config(rope_scaling={"rope_type": "linear", "factor": 2.5})
    plain = dataclasses.replace(cfg, rope_scaling=None)
    x = torch.randn(3, 9, cfg.head_dim, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    t = torch.arange(9, dtype=torch.float64)
    scaled = HF.rotate_half_rope(x, t, HF.rope_frequencies(cfg))
    slowed = HF.rotate_half_rope(x, t / 2.5, HF.rope_frequencies(plain))
    assert _max_err(scaled, slowed) < 1e-14, "linear rope = default rope at positions / factor"
    # The legacy key `type` means the same.
    legacy = dataclasses.replace(cfg, rope_scaling={"type": "linear", "factor": 2.5})
    assert torch.equal(HF.rope_frequencies(legacy), HF.rope_frequencies(cfg)), "legacy 'type' key"


def check_llama3_rope():
    # Llama 3.2 1B: head_dim 64, theta 500000, factor 32, low/high 1/4, original 8192. Pair j
    # has wavelength 2 pi 500000^(j/32); < 8192/4 = 2048 for j <= 14 (j/32 < ln(2048/2pi) /
    # ln(500000) = 0.4410), > 8192 for j >= 18 (j/32 > ln(8192/2pi) / ln(500000) = 0.5466).
    scaling = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    cfg = _hf_config(head_dim=64, num_attention_heads=32, num_key_value_heads=8, hidden_size=2048,
                     rope_theta=500000.0, rope_scaling=scaling)
    plain = HF.default_frequencies(500000.0, 64)
    scaled = HF.rope_frequencies(cfg)
    bands = [HF.llama3_band(2 * math.pi / f, scaling) for f in plain.tolist()]
    assert bands == ["high"] * 15 + ["medium"] * 3 + ["low"] * 14, f"llama3 bands {bands}"
    assert torch.equal(scaled[:15], plain[:15]), "llama3 keeps the high frequencies"
    assert _max_err(scaled[18:], plain[18:] / 32) == 0, "llama3 divides the low frequencies"
    middle, lo, hi = scaled[15:18], plain[15:18] / 32, plain[15:18]
    assert bool(((middle > lo) & (middle < hi)).all()), "llama3 blend lies between f / factor and f"
    # The blend meets f at wavelength original/high and f / factor at original/low.
    for wavelength, want in ((8192 / 4 * (1 + 1e-12), 1.0), (8192 * (1 - 1e-12), 1 / 32)):
        f = 2 * math.pi / wavelength
        assert abs(HF.llama3_frequency(f, scaling) / f - want) < 1e-9, "llama3 blend continuity"


def check_causality(cfg):
    gen = torch.Generator().manual_seed(2)
    params = HF.init_parameters(cfg, gen)
    ids = torch.randint(0, cfg.vocab_size, (2, 10), generator=gen)
    later = ids.clone()
    later[:, 6:] = (later[:, 6:] + 1) % cfg.vocab_size
    a, b = HF.forward(cfg, params, ids), HF.forward(cfg, params, later)
    assert _max_err(a[:, :6], b[:, :6]) < 1e-12, f"{cfg.model_type}: causal mask"
    assert _max_err(a[:, 6], b[:, 6]) > 1e-6, f"{cfg.model_type}: changed token must change logits"


def _moved_pairs(cfg, p, x, name, rows):
    positions, freqs = torch.arange(x.shape[1]), HF.rope_frequencies(cfg)
    base = HF.diffllama_attention(cfg, p, x, positions, freqs, 1)
    moved_p = dict(p)
    moved_p[name] = p[name].clone()
    moved_p[name][rows] += 0.5
    moved = HF.diffllama_attention(cfg, moved_p, x, positions, freqs, 1)
    w = 2 * cfg.head_dim
    return [i for i in range(cfg.num_attention_heads // 2)
            if _max_err(moved[..., i * w:(i + 1) * w], base[..., i * w:(i + 1) * w]) > 1e-12]


def check_diffllama_pairing():
    for heads, kv_heads in ((4, 4), (4, 2), (8, 2), (6, 3), (4, 1)):
        cfg = _hf_config(num_attention_heads=heads, num_key_value_heads=kv_heads)
        gen = torch.Generator().manual_seed(3)
        params = HF.init_parameters(cfg, gen)
        p = {n[len("model.layers.1.self_attn."):]: t for n, t in params.items()
             if n.startswith("model.layers.1.self_attn.")}
        x = torch.randn(2, 7, cfg.hidden_size, generator=gen, dtype=torch.float64)
        d, half, n_rep = cfg.head_dim, heads // 2, cfg.n_rep
        for j in range(heads):
            rows = slice(j * d, (j + 1) * d)
            assert _moved_pairs(cfg, p, x, "q_proj.weight", rows) == [j % half], \
                f"H{heads} Hkv{kv_heads}: query head {j}"
        for g in range(kv_heads):
            readers = [i for i in range(half) if i // n_rep == g or (i + half) // n_rep == g]
            rows = slice(g * d, (g + 1) * d)
            for name in ("k_proj.weight", "v_proj.weight"):
                assert _moved_pairs(cfg, p, x, name, rows) == readers, \
                    f"H{heads} Hkv{kv_heads}: {name} head {g} should move pairs {readers}"


def diffllama_by_tensor_ops(cfg, p, x, positions, freqs, layer_idx):
    """DiffLlama attention as the sequence of whole-tensor steps the issue describes: repeat kv
    heads (GQA), split the repeated values into the first and second half of the heads and
    join the halves along the features, repeat that twice over the heads, attend with all H
    maps, subtract the second half of the outputs (times lambda) from the first, norm."""
    B, T, _ = x.shape
    d, H, Hkv = cfg.head_dim, cfg.num_attention_heads, cfg.num_key_value_heads
    def heads(w, n):
        return (x @ w.T).view(B, T, n, d).transpose(1, 2)
    q = HF.rotate_half_rope(heads(p["q_proj.weight"], H), positions, freqs)
    k = HF.rotate_half_rope(heads(p["k_proj.weight"], Hkv), positions, freqs)
    v = heads(p["v_proj.weight"], Hkv)
    k, v = k.repeat_interleave(cfg.n_rep, dim=1), v.repeat_interleave(cfg.n_rep, dim=1)
    v = torch.cat((v[:, :H // 2], v[:, H // 2:]), dim=-1).repeat(1, 2, 1, 1)   # [B, H, T, 2d]
    scores = q @ k.transpose(-1, -2) / math.sqrt(d)
    scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    out = scores.softmax(-1) @ v
    out = out[:, :H // 2] - HF.diff_lambda(p, layer_idx) * out[:, H // 2:]
    out = HF.rms(out, cfg.rms_norm_eps) * (1 - HF.lambda_init(layer_idx))
    return out.transpose(1, 2).reshape(B, T, -1)


def check_diffllama_tensor_ops():
    for heads, kv_heads in ((4, 4), (8, 4), (8, 2), (6, 3), (4, 1)):
        cfg = _hf_config(num_attention_heads=heads, num_key_value_heads=kv_heads,
                         rope_scaling=LLAMA3_SMALL)
        gen = torch.Generator().manual_seed(5)
        params = HF.init_parameters(cfg, gen)
        p = {n[len("model.layers.1.self_attn."):]: t for n, t in params.items()
             if n.startswith("model.layers.1.self_attn.")}
        x = torch.randn(2, 9, cfg.hidden_size, generator=gen, dtype=torch.float64)
        args = (cfg, p, x, torch.arange(9), HF.rope_frequencies(cfg), 1)
        err = _max_err(HF.diffllama_attention(*args), diffllama_by_tensor_ops(*args))
        assert err < 1e-13, f"DiffLlama H{heads} Hkv{kv_heads}: head loop vs tensor ops {err:.1e}"


def _adjacent_pairing(hf_cfg, params):
    """A deliberately wrong mapping (maps 2i, 2i+1 paired, as in DIFF V2) for the negative check."""
    half = hf_cfg.num_attention_heads // 2
    order = [m for i in range(half) for m in (2 * i, 2 * i + 1)]
    wrong_order = [m for i in range(half) for m in (i, i + half)]
    d = hf_cfg.head_dim
    out = dict(params)
    for l in range(hf_cfg.num_hidden_layers):
        name = f"model.layers.{l}.self_attn.q_proj.weight"
        q = params[name]
        moved = torch.empty_like(q)
        for dst, src in zip(wrong_order, order):
            moved[dst * d:(dst + 1) * d] = q[src * d:(src + 1) * d]
        out[name] = moved
    return out


def cross_check(name, cfg, log):
    """HF oracle == difftx oracle through the mapping; returns the worst float64 difference."""
    cfg = dataclasses.replace(cfg, rope_scaling=None)
    gen = torch.Generator().manual_seed(4)
    params = HF.init_parameters(cfg, gen)
    ids = torch.randint(0, cfg.vocab_size, (2, 11), generator=gen)
    want = HF.forward(cfg, params, ids)
    groupings = [None]
    if cfg.model_type == "diffllama":
        groupings = hf_to_difftx.exact_kv_groupings(cfg)
        assert hf_to_difftx.default_kv_heads(cfg) in groupings, f"{name}: default grouping exact"
    worst = 0.0
    for kv_heads in groupings:
        dcfg = hf_to_difftx.difftx_config(cfg, kv_heads)
        got, _ = M.forward(dcfg, hf_to_difftx.difftx_parameters(cfg, params, kv_heads), ids)
        err = _max_err(got, want)
        assert err < CROSS_CHECK_TOL, f"{name}: difftx oracle (Hkv'={kv_heads}) differs by {err:.2e}"
        worst = max(worst, err)
    if cfg.model_type == "diffllama":
        wrong = hf_to_difftx.difftx_parameters(cfg, _adjacent_pairing(cfg, params))
        got, _ = M.forward(hf_to_difftx.difftx_config(cfg), wrong, ids)
        assert _max_err(got, want) > 1e-3, f"{name}: the cross-check misses a wrong head pairing"
    log(f"cross-check {name}: HF oracle vs difftx oracle ({'diff V1' if groupings != [None] else 'baseline'}"
        f"{', kv groupings ' + str(groupings) if groupings != [None] else ''}) max |diff| {worst:.1e}")
    return worst


def run_all(configs, log=print):
    """configs: [(name, HFConfig)] of the fixtures; raises AssertionError on the first failure."""
    check_half_precision_storage()
    check_linear_rope()
    check_llama3_rope()
    check_diffllama_pairing()
    check_diffllama_tensor_ops()
    for model_type in HF.MODEL_TYPES:
        check_causality(_hf_config(model_type=model_type))
    log("checks passed: BF16/F16 storage, linear and llama3 rope scaling, DiffLlama head pairing "
        "(perturbations, head loop = tensor ops), causality")
    for name, cfg in configs:
        cross_check(name, cfg, log)


if __name__ == "__main__":
    from make_hf_fixtures import CASES, hf_config
    run_all([(case.name, hf_config(case)) for case in CASES])
