"""Checks of the Phi-4-mini-flash oracle (phi4flash_model.py) and of the fixtures it wrote (numpy only).

- lambda_init, mamba_dt_rank "auto" and the layer layout against values worked out by hand.
- LayerNorm: zero mean and unit variance before the gain, against a hand-made row.
- The causal conv: an impulse gives the taps in time order; nothing leaks backwards.
- The selective scan on one channel against its closed form; the parallel sum and the
  recurrence agree on random inputs.
- Attention by perturbation: a key outside the sliding window changes nothing, one inside it
  does; the key/value pair g moves exactly the pair-heads i with i // ((H/2) / (Hkv/2)) == g.
- The whole model: the parallel form equals the recurrent (token-by-token) form to 1e-10 on
  every fixture config; causality; the memory is taken before the gate (a model that takes it
  after differs).
- The loader refuses what it does not model, naming it.
- Every committed fixture tests/fixtures/phi4flash/*: the oracle on the stored weights gives
  logits.npy (to float32 rounding), and the recurrent form does too.
Run with `/usr/bin/python3 tools/oracle/check_phi4flash_model.py`.
"""

import json
import math
import os
import sys

import numpy as np

import phi4flash_model as M

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO_ROOT, "tests", "fixtures", "phi4flash")
EXACT = 1e-10        # float64, two formulations of O(1) values
FIXTURE_REL = 1e-6   # logits.npy is float32


def config(**overrides):
    values = {"architectures": ["Phi4FlashForCausalLM"], "model_type": "phi4flash", "vocab_size": 29,
              "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 8, "num_attention_heads": 4,
              "num_key_value_heads": 2, "sliding_window": 3, "mamba_d_state": 3, "mamba_d_conv": 3,
              "mamba_expand": 2, "layer_norm_eps": 1e-5}
    values.update(overrides)
    return M.Phi4FlashConfig.from_dict({k: v for k, v in values.items() if v is not None})


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def check_hand_values():
    for layer, want in ((0, 0.2), (1, 0.8 - 0.6 * 0.7408182206817179), (5, 0.8 - 0.6 * 0.22313016014842982)):
        check(abs(M.lambda_init(layer) - want) < 1e-15, f"lambda_init({layer})")
    check(config(hidden_size=2560, num_attention_heads=40, num_key_value_heads=20).mamba_dt_rank == 160, "dt_rank 2560")
    check(config(hidden_size=34, num_attention_heads=2).mamba_dt_rank == 3, "dt_rank ceil(34 / 16)")
    check(config(mamba_dt_rank=5).mamba_dt_rank == 5, "dt_rank given")
    kinds = [M.layer_kind(config(), layer) for layer in range(8)]
    check(kinds == ["mamba", "sliding_attention", "mamba", "sliding_attention", "memory_mamba", "full_attention",
                    "gmu", "cross_attention"], f"layout of 8 layers: {kinds}")
    kinds = [M.layer_kind(config(num_hidden_layers=4), layer) for layer in range(4)]
    check(kinds == ["mamba", "sliding_attention", "memory_mamba", "full_attention"], f"layout of 4 layers: {kinds}")
    row = np.array([[1.0, 2.0, 3.0, 6.0]])  # mean 3, variance 3.5
    got = M.layer_norm(row, np.array([2.0] * 4), np.array([0.5] * 4), 0.0)
    check(np.abs(got - ((row - 3) / math.sqrt(3.5) * 2 + 0.5)).max() < 1e-15, "layer norm")
    check(abs(float(M.softplus(np.array([0.0]))[0]) - math.log(2)) < 1e-15, "softplus(0)")
    check(abs(float(M.softplus(np.array([30.0]))[0]) - 30.0) < 1e-12, "softplus(30)")


def check_conv():
    weight = np.array([[[0.5, -1.0, 2.0]], [[1.0, 3.0, -2.0]]])  # [E = 2, 1, K = 3]
    bias = np.array([0.25, -0.5])
    x = np.zeros((5, 2))
    x[1] = [1.0, 10.0]  # an impulse at t = 1
    got = M.causal_conv(x, weight, bias)
    want = np.array([[0, 0], [2, -20], [-1, 30], [0.5, 10], [0, 0]]) + bias
    check(np.abs(got - want).max() < 1e-15, f"conv impulse response {got}")


def check_scan():
    """One channel, S = 1, constant dt: s_t = a s_{t-1} + dt B u_t with a = exp(dt A)."""
    dt, a_log, D = 0.3, math.log(2.0), 0.7
    p = {"A_log": np.array([[a_log]]), "D": np.array([D])}
    u = np.array([[1.0], [0.0], [2.0], [0.0]])
    B, C = np.array([[1.5]] * 4), np.array([[0.5]] * 4)
    a = math.exp(-dt * 2.0)
    s = [dt * 1.5 * 1.0]
    for t in range(1, 4):
        s.append(a * s[-1] + dt * 1.5 * u[t, 0])
    want = np.array([[0.5 * s[t] + D * u[t, 0]] for t in range(4)])
    got = M.scan_parallel(p, u, np.full((4, 1), dt), B, C)
    check(np.abs(got - want).max() < 1e-15, f"scan closed form {got.ravel()} vs {want.ravel()}")
    # random inputs: the parallel sum against the recurrence of mamba_step's update
    rng = np.random.default_rng(7)
    T, E, S = 9, 5, 4
    p = {"A_log": rng.standard_normal((E, S)), "D": rng.standard_normal(E)}
    u, dt = rng.standard_normal((T, E)), rng.uniform(0.05, 0.6, (T, E))
    B, C = rng.standard_normal((T, S)), rng.standard_normal((T, S))
    state, rows = np.zeros((E, S)), []
    for t in range(T):
        state = np.exp(dt[t][:, None] * -np.exp(p["A_log"])) * state + (dt[t] * u[t])[:, None] * B[t][None]
        rows.append(state @ C[t] + p["D"] * u[t])
    check(np.abs(M.scan_parallel(p, u, dt, B, C) - np.array(rows)).max() < EXACT, "scan: sum vs recurrence")


def attention_inputs(cfg, rng, T):
    H, Hkv, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
    # an identity out_proj, so that the output is the pair-heads' outputs side by side
    p = {"out_proj.weight": np.eye(H * d), "out_proj.bias": np.zeros(H * d),
         "inner_cross_attn.subln.weight": np.ones(2 * d)}
    for n in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
        p["inner_cross_attn." + n] = 0.3 * rng.standard_normal(d)
    q, k, v = (rng.standard_normal((T, n, d)) for n in (H, Hkv, Hkv))
    return p, q, k, v


def check_attention():
    rng = np.random.default_rng(11)
    for heads, kv_heads in ((4, 4), (4, 2), (8, 2), (8, 4)):
        cfg = config(hidden_size=8 * heads, num_attention_heads=heads, num_key_value_heads=kv_heads, sliding_window=3)
        T, d, window = 7, cfg.head_dim, cfg.sliding_window
        p, q, k, v = attention_inputs(cfg, rng, T)
        base = M.attention(cfg, p, 3, q, k, v, window)
        t = T - 1
        for s, inside in ((t - window, False), (t - window + 1, True), (0, False)):
            moved_k, moved_v = k.copy(), v.copy()
            moved_k[s] += 1.0
            moved_v[s] += 1.0
            diff = np.abs(M.attention(cfg, p, 3, q, moved_k, moved_v, window)[t] - base[t]).max()
            check((diff > 1e-6) == inside, f"window {window}: key {s} of query {t} moved the output by {diff}")
        full = M.attention(cfg, p, 3, q, k, v, 0)
        check(np.abs(full[:window] - base[:window]).max() < EXACT, "the first `window` rows see the same keys")
        check(np.abs(full[t] - base[t]).max() > 1e-6, "a full layer sees more keys than a sliding one")
        n_rep = (heads // 2) // (kv_heads // 2)
        for head in range(kv_heads):  # kv head 2g + half belongs to pair g
            moved_k, moved_v = k.copy(), v.copy()
            moved_k[:, head] += 1.0
            moved_v[:, head] += 1.0
            out = M.attention(cfg, p, 3, q, moved_k, moved_v, 0)
            moved = [i for i in range(heads // 2) if np.abs(out[:, 2 * i * d:2 * (i + 1) * d]
                                                            - full[:, 2 * i * d:2 * (i + 1) * d]).max() > 1e-9]
            want = [i for i in range(heads // 2) if i // n_rep == head // 2]
            check(moved == want, f"H {heads} Hkv {kv_heads}: kv head {head} moved pair-heads {moved}, want {want}")


def check_model(cfg, seed):
    rng = np.random.default_rng(seed)
    params = M.init_parameters(cfg, rng)
    ids = rng.integers(0, cfg.vocab_size, (2, 10))
    full = M.forward(cfg, params, ids)
    step = M.decode(cfg, params, ids)
    err = np.abs(full - step).max()
    check(err < EXACT, f"parallel vs recurrent form: {err}")
    moved_ids = ids.copy()
    moved_ids[:, 6:] = (moved_ids[:, 6:] + 1) % cfg.vocab_size
    moved = M.forward(cfg, params, moved_ids)
    check(np.abs(moved[:, :6] - full[:, :6]).max() == 0, "causality")
    check(np.abs(moved[:, 6:] - full[:, 6:]).max() > 1e-6, "later tokens matter")
    return err


def check_memory_before_gate():
    """A model that hands on y * silu(z) instead of y must differ (else the fixtures could not tell)."""
    cfg = config()
    rng = np.random.default_rng(5)
    params = M.init_parameters(cfg, rng)
    ids = rng.integers(0, cfg.vocab_size, (1, 8))
    original = M.mamba

    def gated(cfg, p, x):
        out, y = original(cfg, p, x)
        return out, y * M.silu(x @ p["in_proj.weight"][cfg.d_inner:].T)

    M.mamba = gated
    try:
        other = M.forward(cfg, params, ids)
    finally:
        M.mamba = original
    check(np.abs(other - M.forward(cfg, params, ids)).max() > 1e-3, "the memory's gate changes nothing")


def check_refusals():
    for overrides, needle in (({"num_hidden_layers": 6}, "multiple of 4"), ({"mb_per_layer": 3}, "mb_per_layer"),
                              ({"mamba_proj_bias": True}, "mamba_proj_bias"), ({"hidden_act": "gelu"}, "hidden_act"),
                              ({"num_key_value_heads": 3}, "kv heads"), ({"rope_scaling": {"type": "linear"}}, "rope_scaling"),
                              ({"model_type": "phi3"}, "model_type"), ({"mamba_dt_rank": 0}, "mamba_dt_rank"),
                              ({"resid_pdrop": 0.1}, "resid_pdrop")):
        try:
            config(**overrides)
        except ValueError as e:
            check(needle in str(e), f"{overrides}: message {e} lacks {needle}")
        else:
            raise AssertionError(f"{overrides} was accepted")


def check_fixtures():
    if not os.path.isdir(FIXTURES):
        print(f"  no fixtures under {FIXTURES} yet")
        return
    for name in sorted(os.listdir(FIXTURES)):
        directory = os.path.join(FIXTURES, name)
        cfg, params = M.load_checkpoint(directory)
        ids = np.load(os.path.join(directory, "tokens.npy"))
        want = np.load(os.path.join(directory, "logits.npy")).astype(np.float64)
        scale = np.abs(want).max()
        for label, got in (("parallel", M.forward(cfg, params, ids)), ("recurrent", M.decode(cfg, params, ids))):
            err = np.abs(got - want).max()
            check(err <= FIXTURE_REL * scale, f"{name} ({label}): |err| {err} against logits.npy")
        print(f"  {name}: logits.npy reproduced (parallel and recurrent)")


def run_checks(fixtures=True):
    check_hand_values()
    check_conv()
    check_scan()
    check_attention()
    check_memory_before_gate()
    check_refusals()
    for overrides, seed in (({}, 1), ({"num_hidden_layers": 4, "sliding_window": 20}, 2),
                            ({"num_hidden_layers": 12, "mamba_d_state": None, "mamba_d_conv": None,
                              "mamba_expand": None, "sliding_window": 4}, 3),
                            ({"num_key_value_heads": 4, "tie_word_embeddings": False, "mamba_dt_rank": 3}, 4)):
        err = check_model(config(**overrides), seed)
        print(f"  parallel vs recurrent, {overrides or 'default'}: max|diff| {err:.1e}")
    if fixtures:
        check_fixtures()


if __name__ == "__main__":
    run_checks()
    print("phi4flash oracle: all checks passed")
    sys.exit(0)
