"""Checks of the Motif oracle (motif_model.py) and of the fixtures it wrote (numpy only).

- lambda_init at layers 0, 1, 2 and PolyNorm against values worked out by hand.
- RoPE: a unit vector turns by t theta^(-2i/d) into the other half of its pair; q.k depends
  only on the offset between positions.
- Head layout by perturbation, against tables written out by hand for each config: a query
  head moves only its signal head (a noise head: the r signal heads of its group); a key or
  value head of pair m moves exactly the signal heads that read pair m.
- The head loop equals GDA written as whole-tensor steps (heads reshaped into groups and
  pairs, keys and values repeated per group, noise outputs repeated r times).
- Causality; decoding token by token through the KV cache equals the full forward.
- The loader refuses what it does not model, naming it (config keys, tensors, shapes).
- r = 1 against the DiffLlama oracle (hf_model.py, needs torch: skipped, and said so, without
  it): with heads 2i, 2i + 1 sent to DiffLlama's maps i and i + H/2, key/value heads 2m,
  2m + 1 to heads m and m + Hkv/2, subln = ones and DiffLlama's layer index l - 1, the two
  attentions agree to 1e-12; without the l - 1 they do not.
- Every committed fixture tests/fixtures/hf/motif_*: the oracle on the stored weights gives
  logits.npy (to float32 rounding), decoding gives the same, and a dropped subln gain does not.
Run with `/usr/bin/python3 tools/oracle/check_motif_model.py` (tests/scripts/motif_oracle.sh).
"""

import json
import math
import os
import sys
import tempfile

import numpy as np

import motif_model as M
from hf_checkpoint import write_json, write_weights

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO_ROOT, "tests", "fixtures", "hf")
EXACT = 1e-12        # float64, two summation orders of O(1) values
FIXTURE_REL = 1e-6   # logits.npy is float32: 2^-24 relative rounding, plus summation order

# (heads, noise heads or None, kv heads) -> per query head, the signal heads it moves; per key
# /value pair, the signal heads reading it. Written out by hand from the layout.
LAYOUTS = {
    (4, None, 4): ([[0], [0], [1], [1]], [[0], [1]]),
    (8, None, 4): ([[0], [0], [1], [1], [2], [2], [3], [3]], [[0, 1], [2, 3]]),
    (8, None, 2): ([[0], [0], [1], [1], [2], [2], [3], [3]], [[0, 1, 2, 3]]),
    (10, 2, 4): ([[0], [1], [2], [3], [0, 1, 2, 3], [4], [5], [6], [7], [4, 5, 6, 7]],
                 [[0, 1, 2, 3], [4, 5, 6, 7]]),
    (10, 2, 2): ([[0], [1], [2], [3], [0, 1, 2, 3], [4], [5], [6], [7], [4, 5, 6, 7]],
                 [[0, 1, 2, 3, 4, 5, 6, 7]]),
    (12, 4, 4): ([[0], [1], [0, 1], [2], [3], [2, 3], [4], [5], [4, 5], [6], [7], [6, 7]],
                 [[0, 1, 2, 3], [4, 5, 6, 7]]),
    (9, 3, 6): ([[0], [1], [0, 1], [2], [3], [2, 3], [4], [5], [4, 5]], [[0, 1], [2, 3], [4, 5]]),
}


def config(heads=10, noise=2, kv_heads=4, head_dim=4, **overrides):
    values = {"architectures": ["MotifForCausalLM"], "model_type": "motif", "vocab_size": 23,
              "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
              "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": head_dim,
              "rms_norm_eps": 1e-6, "attn_rms_norm_eps": 1e-5, "rope_theta": 100.0,
              "tie_word_embeddings": False, "hidden_act": "poly_norm"}
    if noise is not None:
        values["num_noise_heads"] = noise
    values.update(overrides)
    return values


def random_model(values, seed):
    cfg = M.MotifConfig.from_dict(values)
    rng = np.random.default_rng(seed)
    return cfg, M.init_parameters(cfg, rng), rng


def max_err(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max())


def check_lambda_init():
    # 0.8 - 0.6 e^{0.3}, 0.8 - 0.6, 0.8 - 0.6 e^{-0.3}
    for layer, want in ((0, -0.0099152845456019), (1, 0.2), (2, 0.3555090675909693)):
        assert abs(M.lambda_init(layer) - want) < 1e-15, f"lambda_init({layer})"


def check_polynorm():
    w, b = np.array([0.2, -0.7, 1.3]), np.array([0.05])
    # z = (1, -1): z^3 = z, z^2 = (1, 1), every mean square 1.
    got = M.polynorm(np.array([1.0, -1.0]), w, b)
    want = np.array([0.2 - 0.7 + 1.3, -0.2 - 0.7 - 1.3]) / math.sqrt(1 + 1e-6) + 0.05
    assert max_err(got, want) < 1e-15, "PolyNorm on (1, -1)"
    # z = (0, 2): z^3 = (0, 8), z^2 = (0, 4), z = (0, 2); mean squares 32, 8, 2.
    got = M.polynorm(np.array([0.0, 2.0]), w, b)
    want = np.array([0.0, 0.2 * 8 / math.sqrt(32 + 1e-6) - 0.7 * 4 / math.sqrt(8 + 1e-6)
                     + 1.3 * 2 / math.sqrt(2 + 1e-6)]) + 0.05
    assert max_err(got, want) < 1e-15, "PolyNorm on (0, 2)"


def check_rope():
    d, theta = 8, 100.0
    for i in range(d // 2):
        x = np.zeros((1, d))
        x[0, i] = 1.0
        for t in (0, 3, 7):
            angle = t * theta ** (-2.0 * i / d)
            want = np.zeros(d)
            want[i], want[i + d // 2] = math.cos(angle), math.sin(angle)
            assert max_err(M.rope(x, [t], theta)[0], want) < 1e-15, f"RoPE pair {i} at {t}"
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((1, d)), rng.standard_normal((1, d))
    dots = [float(M.rope(q, [t + 5], theta)[0] @ M.rope(k, [t], theta)[0]) for t in (0, 4, 11)]
    assert max(dots) - min(dots) < 1e-12, "RoPE: q.k depends on the offset only"


def _moved_signal_heads(cfg, p, x, name, head):
    base = M.attention(cfg, p, x, 1)
    moved_p = dict(p)
    moved_p[name] = p[name].copy()
    moved_p[name][head * cfg.head_dim:(head + 1) * cfg.head_dim] += 0.5
    moved = M.attention(cfg, moved_p, x, 1)
    w = 2 * cfg.head_dim
    return [j for j in range(cfg.signal_heads)
            if max_err(moved[..., j * w:(j + 1) * w], base[..., j * w:(j + 1) * w]) > 1e-12]


def check_head_layout():
    for (heads, noise, kv_heads), (by_query, by_pair) in LAYOUTS.items():
        cfg, params, rng = random_model(config(heads, noise, kv_heads), 3)
        p = M.layer_params(params, 1, "self_attn")
        assert abs(M.layer_lambda(p, 1)) > 0.05, "lambda must not vanish, or noise heads move nothing"
        x = rng.standard_normal((2, 7, cfg.hidden_size))
        label = f"H{heads} N{noise} Hkv{kv_heads}"
        for h in range(heads):
            got = _moved_signal_heads(cfg, p, x, "q_proj.weight", h)
            assert got == by_query[h], f"{label}: query head {h} moves {got}, not {by_query[h]}"
        for m, readers in enumerate(by_pair):
            for h in (2 * m, 2 * m + 1):
                for name in ("k_proj.weight", "v_proj.weight"):
                    got = _moved_signal_heads(cfg, p, x, name, h)
                    assert got == readers, f"{label}: {name} head {h} moves {got}, not {readers}"


def gda_by_tensor_ops(cfg, p, x, layer):
    """GDA as whole-tensor steps: query heads reshaped to [N, r + 1] (the last of each group
    the noise head), key/value heads to [P, 2] (K1/V1, K2/V2), keys and joined values repeated
    to S signal and N noise heads, the noise outputs repeated r times to meet their signal heads."""
    B, T, _ = x.shape
    d, N, r, P, S = cfg.head_dim, cfg.num_noise_heads, cfg.ratio, cfg.pairs, cfg.signal_heads
    positions = np.arange(T)
    q = M.rope(M.project_heads(x, p["q_proj.weight"], cfg.num_attention_heads, d), positions, cfg.rope_theta)
    k = M.rope(M.project_heads(x, p["k_proj.weight"], cfg.num_key_value_heads, d), positions, cfg.rope_theta)
    v = M.project_heads(x, p["v_proj.weight"], cfg.num_key_value_heads, d).reshape(B, P, 2, T, d)
    q = q.reshape(B, N, r + 1, T, d)
    q1, q2 = q[:, :, :r].reshape(B, S, T, d), q[:, :, r]
    k = k.reshape(B, P, 2, T, d)
    value = np.concatenate((v[:, :, 0], v[:, :, 1]), axis=-1)              # [B, P, T, 2d]
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    def maps(queries, keys):
        return M.softmax(np.where(mask, -np.inf, queries @ np.swapaxes(keys, -1, -2) / math.sqrt(d)))
    signal = maps(q1, np.repeat(k[:, :, 0], S // P, axis=1)) @ np.repeat(value, S // P, axis=1)
    noise = maps(q2, np.repeat(k[:, :, 1], N // P, axis=1)) @ np.repeat(value, N // P, axis=1)
    out = signal - M.layer_lambda(p, layer) * np.repeat(noise, r, axis=1)
    out = M.rms(out, cfg.attn_rms_norm_eps) * p["subln.weight"] * (1 - M.lambda_init(layer))
    return out.transpose(0, 2, 1, 3).reshape(B, T, S * 2 * d)


def check_tensor_ops():
    for heads, noise, kv_heads in LAYOUTS:
        cfg, params, rng = random_model(config(heads, noise, kv_heads), 5)
        x = rng.standard_normal((2, 9, cfg.hidden_size))
        for layer in range(cfg.num_hidden_layers):
            p = M.layer_params(params, layer, "self_attn")
            err = max_err(M.attention(cfg, p, x, layer), gda_by_tensor_ops(cfg, p, x, layer))
            assert err < EXACT, f"H{heads} N{noise} Hkv{kv_heads}: head loop vs tensor ops {err:.1e}"


def check_causality_and_decode():
    for heads, noise, kv_heads in LAYOUTS:
        cfg, params, rng = random_model(config(heads, noise, kv_heads), 6)
        ids = rng.integers(0, cfg.vocab_size, (2, 10))
        full = M.forward(cfg, params, ids)
        later = ids.copy()
        later[:, 6:] = (later[:, 6:] + 1) % cfg.vocab_size
        changed = M.forward(cfg, params, later)
        assert max_err(full[:, :6], changed[:, :6]) < EXACT, "causal mask"
        assert max_err(full[:, 6], changed[:, 6]) > 1e-6, "a changed token must change its logits"
        err = max_err(M.decode(cfg, params, ids), full)
        assert err < EXACT, f"H{heads} N{noise} Hkv{kv_heads}: decode vs full forward {err:.1e}"


def _expect_error(what, fragment, action):
    try:
        action()
    except ValueError as e:
        assert fragment in str(e), f"{what}: error {e!r} does not name {fragment!r}"
        return
    raise AssertionError(f"{what}: accepted")


def check_loader():
    values = {**config(), "model_type": "Motif"}
    for key, value, fragment in (("rope_scaling", {"rope_type": "linear", "factor": 2.0}, "rope_scaling"),
                                 ("k_ratio", 2, "k_ratio"), ("hidden_act", "silu", "hidden_act"),
                                 ("use_bias", True, "use_bias"), ("model_type", "llama", "model_type"),
                                 ("num_key_value_heads", 6, "pairs"), ("num_noise_heads", 3, "num_noise_heads"),
                                 ("grouped_ratio", 3, "grouped_ratio"), ("architectures", ["X"], "architectures")):
        _expect_error(f"config {key}", fragment, lambda: M.MotifConfig.from_dict({**values, key: value}))
    assert M.MotifConfig.from_dict({**values, "grouped_ratio": 4}).ratio == 4
    without_head_dim = {k: v for k, v in values.items() if k != "head_dim"}
    _expect_error("num_noise_heads without head_dim", "head_dim", lambda: M.MotifConfig.from_dict(without_head_dim))
    cfg, params, _ = random_model(values, 8)
    with tempfile.TemporaryDirectory() as tmp:
        def write(tensors, shards=2):
            for name in os.listdir(tmp):
                os.remove(os.path.join(tmp, name))
            write_json(os.path.join(tmp, "config.json"), values)
            write_weights(tmp, tensors, "F32", shards)
        write(params)
        loaded_cfg, loaded = M.load_checkpoint(tmp)
        assert loaded_cfg == cfg and set(loaded) == set(params), "sharded checkpoint round trip"
        assert max(max_err(loaded[n], params[n].astype(np.float32)) for n in params) == 0
        dropped = "model.layers.1.self_attn.subln.weight"
        write({n: t for n, t in params.items() if n != dropped})
        _expect_error("missing tensor", dropped, lambda: M.load_checkpoint(tmp))
        write({**params, "model.layers.0.mlp.extra.weight": np.zeros(2)}, shards=1)
        _expect_error("extra tensor", "model.layers.0.mlp.extra.weight", lambda: M.load_checkpoint(tmp))
        write({**params, "model.norm.weight": np.zeros(3)}, shards=1)
        _expect_error("shape", "model.norm.weight", lambda: M.load_checkpoint(tmp))
        buffers = {f"model.layers.0.self_attn.rotary_emb.{n}": np.ones((4, 2)) for n in ("inv_freq", "cos_cached", "sin_cached")}
        write({**params, **buffers})
        assert set(M.load_checkpoint(tmp)[1]) == set(params), "RoPE buffers are dropped"


def check_against_diffllama():
    """r = 1 Motif attention == DiffLlama attention (hf_model.py) under the head maps above."""
    try:
        import torch
        import hf_model as HF
    except ImportError:
        return "skipped (no torch: scripts/setup --oracle installs it)"
    worst = 0.0
    for heads, kv_heads in ((4, 4), (8, 4), (8, 2), (4, 2)):
        cfg, params, rng = random_model(config(heads, None, kv_heads), 9)
        hcfg = HF.HFConfig.from_dict({"model_type": "diffllama", "vocab_size": cfg.vocab_size,
                                      "hidden_size": cfg.hidden_size, "intermediate_size": cfg.intermediate_size,
                                      "num_hidden_layers": 2, "num_attention_heads": heads,
                                      "num_key_value_heads": kv_heads, "head_dim": cfg.head_dim,
                                      "max_position_embeddings": 32, "rope_theta": cfg.rope_theta,
                                      "rms_norm_eps": cfg.attn_rms_norm_eps, "tie_word_embeddings": False})
        d, half, P = cfg.head_dim, heads // 2, cfg.pairs
        q_order = [2 * i for i in range(half)] + [2 * i + 1 for i in range(half)]  # DiffLlama map -> Motif head
        kv_order = [2 * m for m in range(P)] + [2 * m + 1 for m in range(P)]
        x = rng.standard_normal((2, 9, cfg.hidden_size))
        for layer in range(cfg.num_hidden_layers):
            p = M.layer_params(params, layer, "self_attn")
            p["subln.weight"] = np.ones(2 * d)
            def rows(w, order):
                return torch.from_numpy(np.concatenate([w[h * d:(h + 1) * d] for h in order]))
            hp = {"q_proj.weight": rows(p["q_proj.weight"], q_order),
                  "k_proj.weight": rows(p["k_proj.weight"], kv_order),
                  "v_proj.weight": rows(p["v_proj.weight"], kv_order)}
            hp.update({n: torch.from_numpy(p[n]) for n in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")})
            args = (hcfg, hp, torch.from_numpy(x), torch.arange(9), HF.rope_frequencies(hcfg))
            want = M.attention(cfg, p, x, layer)
            err = max_err(HF.diffllama_attention(*args, layer - 1).numpy(), want)
            assert err < EXACT, f"H{heads} Hkv{kv_heads} layer {layer}: Motif vs DiffLlama {err:.1e}"
            unshifted = max_err(HF.diffllama_attention(*args, layer).numpy(), want)
            assert unshifted > 1e-3, "the cross-check must see DiffLlama's lambda_init (no l - 1)"
            worst = max(worst, err)
    return f"max |diff| {worst:.1e}"


def fixture_dirs(root=FIXTURES):
    return sorted(os.path.join(root, n) for n in os.listdir(root) if n.startswith("motif_"))


def check_fixture(case_dir):
    """max |oracle - logits.npy| / (1 + max|logit|) on the stored weights; decode agrees."""
    cfg, params = M.load_checkpoint(case_dir)
    tokens, stored = np.load(os.path.join(case_dir, "tokens.npy")), np.load(os.path.join(case_dir, "logits.npy"))
    assert tokens.dtype == np.int64 and stored.dtype == np.float32, "tokens int64, logits float32"
    logits = M.forward(cfg, params, tokens)
    scale = 1 + np.abs(logits).max()
    err = max_err(logits, stored) / scale
    assert err < FIXTURE_REL, f"{case_dir}: logits.npy differs from the oracle by {err:.1e} (relative)"
    decode_err = max_err(M.decode(cfg, params, tokens), logits)
    assert decode_err < EXACT, f"{case_dir}: decode vs full forward {decode_err:.1e}"
    no_gain = {n: (np.ones_like(t) if n.endswith("subln.weight") else t) for n, t in params.items()}
    assert max_err(M.forward(cfg, no_gain, tokens), stored) / scale > 100 * FIXTURE_REL, \
        f"{case_dir}: the comparison cannot see a dropped subln gain"
    with open(os.path.join(case_dir, "config.json")) as f:
        model_type = json.load(f)["model_type"]
    return f"{os.path.basename(case_dir)} ({model_type}, r {cfg.ratio}): {err:.1e}, decode {decode_err:.1e}"


def run_checks(log=print):
    check_lambda_init()
    check_polynorm()
    check_rope()
    check_head_layout()
    check_tensor_ops()
    check_causality_and_decode()
    check_loader()
    log("checks passed: lambda_init, PolyNorm, RoPE, head layout (perturbations), head loop = tensor ops, "
        "causality, decode = full forward, loader errors")
    log(f"r = 1 against the DiffLlama oracle: {check_against_diffllama()}")


def main():
    run_checks()
    dirs = fixture_dirs()
    assert len(dirs) >= 5, f"expected the motif_* fixtures under {FIXTURES}, found {len(dirs)}"
    for case_dir in dirs:
        print("fixture " + check_fixture(case_dir))
    print(f"{len(dirs)} fixtures match the oracle")


if __name__ == "__main__":
    sys.exit(main())
