"""Self-checks of the oracle model, run by make_fixtures.py before it writes anything.

Each check raises AssertionError with a message when the model breaks a docs/SPEC.md rule:
RoPE conventions, causality, the ignore id, DIFF V1 GQA pairing (per-head loop written from
the docs/SPEC.md §2.2 column layout), DIFF V2 adjacent pairing, whole-model gradients against central
finite differences in float64, the AdamW update formula the README states, and the
safetensors round trip. Run alone with `/usr/bin/python3 tools/oracle/check_model.py`.
"""

import dataclasses
import math
import os
import tempfile

import torch
import torch.nn.functional as F

import model as M
from safetensors_io import read_safetensors, write_safetensors

DTYPE = torch.float64


def _close(a, b, tol, what):
    err = (a - b).abs().max().item()
    assert err <= tol, f"{what}: max abs error {err:.3e} > {tol:.1e}"
    return err


def _normed_input(cfg, gen, batch=2, seq_len=7):
    x = torch.randn(batch, seq_len, cfg.hidden_size, generator=gen, dtype=DTYPE)
    rope = (*M.rope_tables(seq_len, cfg.head_dim, cfg.rope_theta, DTYPE), cfg.rope_style)
    return x, rope


def check_rope():
    d, T = 8, 6
    cos, sin = M.rope_tables(T, d, 10000.0, DTYPE)
    # Pair 0 at position t turns (1, 0) into (cos t, sin t): counter-clockwise by t rad.
    unit = torch.zeros(T, d, dtype=DTYPE)
    unit[:, 0] = 1.0
    turned = M.apply_rope(unit, cos, sin, "interleaved")
    t = torch.arange(T, dtype=DTYPE)
    _close(turned[:, 0], t.cos(), 1e-15, "rope pair 0 cos")
    _close(turned[:, 1], t.sin(), 1e-15, "rope pair 0 sin")
    # Pair i turns with frequency theta^(-2i/d).
    unit = torch.zeros(T, d, dtype=DTYPE)
    unit[:, 6] = 1.0
    turned = M.apply_rope(unit, cos, sin, "interleaved")
    _close(turned[:, 7], (t * 10000.0 ** (-6 / d)).sin(), 1e-15, "rope pair 3 frequency")

    gen = torch.Generator().manual_seed(1)
    q = torch.randn(d, generator=gen, dtype=DTYPE).expand(T, d)
    k = torch.randn(d, generator=gen, dtype=DTYPE).expand(T, d)
    for style in M.ROPE_STYLES:
        rq, rk = M.apply_rope(q, cos, sin, style), M.apply_rope(k, cos, sin, style)
        _close(rq.norm(dim=-1), q.norm(dim=-1), 1e-13, f"rope {style} keeps norms")
        # q.k after RoPE depends only on the offset between positions.
        scores = rq @ rk.T
        for offset in range(1, T):
            diag = scores.diagonal(offset)
            _close(diag, diag[:1].expand_as(diag), 1e-12, f"rope {style} relative offset {offset}")

    # half-style pairs (i, i + d/2) are interleaved pairs (2i, 2i+1) after a permutation.
    x = torch.randn(T, d, generator=gen, dtype=DTYPE)
    to_interleaved = torch.stack((torch.arange(d // 2), torch.arange(d // 2) + d // 2), -1).flatten()
    via_interleaved = torch.empty_like(x)
    via_interleaved[:, to_interleaved] = M.apply_rope(x[:, to_interleaved], cos, sin, "interleaved")
    _close(M.apply_rope(x, cos, sin, "half"), via_interleaved, 1e-15, "rope half vs interleaved")


def check_lambda_init():
    cfg = _config("diff")
    _close(torch.tensor(M.lambda_init_for_layer(cfg, 0)), torch.tensor(0.2), 1e-15, "lambda_init l=1")
    _close(torch.tensor(M.lambda_init_for_layer(cfg, 1)), torch.tensor(0.8 - 0.6 * math.exp(-0.3)),
           1e-15, "lambda_init l=2")
    const = dataclasses.replace(cfg, lambda_init=0.5)
    assert M.lambda_init_for_layer(const, 1) == 0.5, "constant lambda_init"
    assert M.default_intermediate_size(32) == 128 and M.default_intermediate_size(96) == 256


def diff_heads_by_loop(cfg, p, x, rope, layer_index):
    """docs/SPEC.md §2.2 head by head, slicing the projection columns exactly as the SPEC lays them out."""
    d, n_rep = cfg.head_dim, cfg.n_rep
    Q, K, V = x @ p["q_proj.weight"].T, x @ p["k_proj.weight"].T, x @ p["v_proj.weight"].T
    lambda_init = M.lambda_init_for_layer(cfg, layer_index)
    lam = M.diff_lambda(p, lambda_init)
    heads = []
    for i in range(cfg.num_attention_heads):
        g = i // n_rep
        q1, q2 = Q[..., 2 * i * d:(2 * i + 1) * d], Q[..., (2 * i + 1) * d:(2 * i + 2) * d]
        k1, k2 = K[..., 2 * g * d:(2 * g + 1) * d], K[..., (2 * g + 1) * d:(2 * g + 2) * d]
        v = V[..., g * 2 * d:(g + 1) * 2 * d]
        q1, q2, k1, k2 = (M.apply_rope(t, *rope) for t in (q1, q2, k1, k2))
        a1 = M.causal_softmax(q1 @ k1.transpose(-1, -2) / math.sqrt(d))
        a2 = M.causal_softmax(q2 @ k2.transpose(-1, -2) / math.sqrt(d))
        h = (a1 - lam * a2) @ v
        if cfg.diff_subln:
            h = M.rms_norm(h, p["subln.weight"], cfg.rms_norm_eps) * (1 - lambda_init)
        heads.append(h)
    return torch.stack(heads, dim=1)


def diff2_heads_by_loop(cfg, p, x, rope):
    """docs/SPEC.md §2.3 head by head: query heads 2i and 2i+1 over kv head j // (2h / Hkv)."""
    d, n_rep = cfg.head_dim, cfg.n_rep
    Q, K, V = x @ p["q_proj.weight"].T, x @ p["k_proj.weight"].T, x @ p["v_proj.weight"].T
    lam = torch.sigmoid(x @ p["lambda_proj.weight"].T)

    def softmax_head(j):
        g = j // n_rep
        q = M.apply_rope(Q[..., j * d:(j + 1) * d], *rope)
        k = M.apply_rope(K[..., g * d:(g + 1) * d], *rope)
        return M.causal_softmax(q @ k.transpose(-1, -2) / math.sqrt(d)) @ V[..., g * d:(g + 1) * d]

    heads = [softmax_head(2 * i) - lam[..., i:i + 1] * softmax_head(2 * i + 1)
             for i in range(cfg.num_attention_heads)]
    return torch.stack(heads, dim=1)


def _attention_params(cfg, seed):
    params = M.init_parameters(cfg, torch.Generator().manual_seed(seed))
    return M.layer_params(params, "model.layers.1.self_attn.")


def _changed_heads(cfg, p, x, rope, name, rows):
    """Which output heads move when the given rows of parameter `name` are perturbed."""
    base, _ = M.attention_heads(cfg, p, x, rope, 1)
    q = dict(p)
    q[name] = p[name].clone()
    q[name][rows] += 0.5
    moved, _ = M.attention_heads(cfg, q, x, rope, 1)
    return [i for i in range(base.shape[1]) if (moved[:, i] - base[:, i]).abs().max() > 1e-12]


def check_diff_gqa_pairing():
    gen = torch.Generator().manual_seed(2)
    for heads, kv_heads, subln in ((4, 2, True), (2, 1, True), (4, 4, False), (4, 1, True)):
        cfg = _config("diff", num_attention_heads=heads, num_key_value_heads=kv_heads,
                      diff_subln=subln)
        p = _attention_params(cfg, 3)
        x, rope = _normed_input(cfg, gen)
        fast, _ = M.attention_diff(cfg, p, x, rope, 1)
        _close(fast, diff_heads_by_loop(cfg, p, x, rope, 1), 1e-13,
               f"diff H{heads} Hkv{kv_heads} vs per-head loop")

    # With lambda = 0 only A1 counts: k2 rows must not matter, k1 rows of group g move exactly
    # the heads i with i // n_rep == g. With lambda != 0, k2 rows of group g move the same heads.
    cfg = _config("diff", num_attention_heads=4, num_key_value_heads=2, lambda_init=0.0)
    d, p = cfg.head_dim, _attention_params(cfg, 4)
    x, rope = _normed_input(cfg, gen)
    for name in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
        p[name] = torch.zeros_like(p[name])
    for g in range(2):
        k1_rows, k2_rows = slice(2 * g * d, (2 * g + 1) * d), slice((2 * g + 1) * d, (2 * g + 2) * d)
        group = [i for i in range(4) if i // cfg.n_rep == g]
        assert _changed_heads(cfg, p, x, rope, "k_proj.weight", k1_rows) == group, "k1 of group"
        assert _changed_heads(cfg, p, x, rope, "k_proj.weight", k2_rows) == [], "k2 with lambda 0"
    p["lambda_q1"] = torch.full_like(p["lambda_q1"], 0.3)
    p["lambda_k1"] = torch.full_like(p["lambda_k1"], 0.3)
    for g in range(2):
        k2_rows = slice((2 * g + 1) * d, (2 * g + 2) * d)
        group = [i for i in range(4) if i // cfg.n_rep == g]
        assert _changed_heads(cfg, p, x, rope, "k_proj.weight", k2_rows) == group, "k2 of group"


def check_diff2_adjacent_pairing():
    gen = torch.Generator().manual_seed(5)
    for heads, kv_heads in ((2, 2), (2, 1), (3, 3), (2, 4)):
        cfg = _config("diff2", num_attention_heads=heads, num_key_value_heads=kv_heads)
        p = _attention_params(cfg, 6)
        x, rope = _normed_input(cfg, gen)
        fast, _ = M.attention_diff2(cfg, p, x, rope)
        _close(fast, diff2_heads_by_loop(cfg, p, x, rope), 1e-13,
               f"diff2 h{heads} Hkv{kv_heads} vs per-head loop")
    # Query head j feeds output head j // 2 only (adjacent pairs, not first half vs second half).
    cfg = _config("diff2", num_attention_heads=3, num_key_value_heads=3)
    d, p = cfg.head_dim, _attention_params(cfg, 7)
    x, rope = _normed_input(cfg, gen)
    for j in range(cfg.query_heads):
        moved = _changed_heads(cfg, p, x, rope, "q_proj.weight", slice(j * d, (j + 1) * d))
        assert moved == [j // 2], f"diff2 query head {j} moved output heads {moved}"
    for i in range(cfg.num_attention_heads):
        moved = _changed_heads(cfg, p, x, rope, "lambda_proj.weight", slice(i, i + 1))
        assert moved == [i], f"diff2 lambda row {i} moved output heads {moved}"


def check_causality_and_ignore(cfg):
    gen = torch.Generator().manual_seed(8)
    params = M.init_parameters(cfg, gen)
    ids = torch.randint(0, cfg.vocab_size, (2, 10), generator=gen)
    logits, _ = M.forward(cfg, params, ids)
    later = ids.clone()
    later[:, 6:] = (later[:, 6:] + 1) % cfg.vocab_size
    moved, _ = M.forward(cfg, params, later)
    _close(moved[:, :6], logits[:, :6], 1e-12, f"{cfg.attention}: causal mask")
    assert (moved[:, 6] - logits[:, 6]).abs().max() > 1e-6, "changed token must change logits"

    targets = torch.randint(0, cfg.vocab_size, (2, 10), generator=gen)
    targets[0, 2] = targets[1, 9] = M.IGNORE_ID
    expected = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), targets.reshape(-1),
                               ignore_index=M.IGNORE_ID)
    _close(M.cross_entropy(logits, targets), expected, 1e-13, "cross-entropy with ignore id")


def check_gradients(cfg, probes=3, step=1e-5):
    """Autograd against central differences in float64 at `probes` entries of every tensor."""
    gen = torch.Generator().manual_seed(9)
    params = M.init_parameters(cfg, gen)
    ids = torch.randint(0, cfg.vocab_size, (2, 9), generator=gen)
    targets = torch.randint(0, cfg.vocab_size, (2, 9), generator=gen)
    targets[1, 4] = M.IGNORE_ID
    leaves = {n: t.clone().requires_grad_(True) for n, t in params.items()}
    M.loss_of(cfg, leaves, ids, targets).backward()
    worst = 0.0
    for name, t in params.items():
        flat = torch.randperm(t.numel(), generator=gen)[:probes]
        for index in flat.tolist():
            def loss_at(delta):
                moved = dict(params)
                moved[name] = t.clone()
                moved[name].view(-1)[index] += delta
                return M.loss_of(cfg, moved, ids, targets).item()
            numeric = (loss_at(step) - loss_at(-step)) / (2 * step)
            analytic = leaves[name].grad.view(-1)[index].item()
            err = abs(numeric - analytic)
            assert err <= 1e-8 + 1e-6 * abs(analytic), \
                f"{cfg.attention}: d loss / d {name}[{index}] autograd {analytic} vs fd {numeric}"
            worst = max(worst, err)
    return worst


def check_adamw_formula():
    """torch.optim.AdamW equals the update written in README.md, decay split by ndim."""
    gen = torch.Generator().manual_seed(10)
    params = [torch.randn(3, 4, generator=gen, dtype=DTYPE), torch.randn(5, generator=gen, dtype=DTYPE)]
    grads = [[torch.randn_like(p) for p in params] for _ in range(4)]
    lr, b1, b2, eps, wd = 1e-2, 0.9, 0.95, 1e-8, 0.1
    leaves = [p.clone().requires_grad_(True) for p in params]
    opt = torch.optim.AdamW([{"params": [leaves[0]], "weight_decay": wd},
                             {"params": [leaves[1]], "weight_decay": 0.0}],
                            lr=lr, betas=(b1, b2), eps=eps)
    mine = [p.clone() for p in params]
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for step, step_grads in enumerate(grads, start=1):
        for leaf, g in zip(leaves, step_grads):
            leaf.grad = g.clone()
        opt.step()
        for i, g in enumerate(step_grads):
            decay = wd if mine[i].dim() >= 2 else 0.0
            mine[i] = mine[i] * (1 - lr * decay)
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            m_hat, v_hat = m[i] / (1 - b1 ** step), v[i] / (1 - b2 ** step)
            mine[i] = mine[i] - lr * m_hat / (v_hat.sqrt() + eps)
    for leaf, p in zip(leaves, mine):
        _close(leaf.detach(), p, 1e-14, "AdamW formula")


def check_safetensors_roundtrip():
    gen = torch.Generator().manual_seed(11)
    tensors = {"a.weight": ("F32", torch.randn(3, 5, generator=gen, dtype=DTYPE)),
               "ids": ("I32", torch.randint(-1, 100, (2, 7), generator=gen)),
               "scalar": ("F32", torch.tensor([1.5]))}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.safetensors")
        write_safetensors(path, tensors, {"note": "x"})
        with open(path, "rb") as f:
            header_len = int.from_bytes(f.read(8), "little")
        assert header_len % 8 == 0, "header padded to a multiple of 8"
        back, metadata = read_safetensors(path)
    assert metadata == {"note": "x"}, "metadata round trip"
    assert list(back) == list(tensors), "tensor order round trip"
    for name, (tag, t) in tensors.items():
        assert back[name].dtype == {"F32": torch.float32, "I32": torch.int32}[tag], name
        assert list(back[name].shape) == list(t.shape), name
        _close(back[name].to(DTYPE), t.to(torch.float32).to(DTYPE), 0.0, f"round trip {name}")


def _config(attention, **overrides):
    values = {
        "model_type": "difftx", "attention": attention, "vocab_size": 29, "hidden_size": 24,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
        "head_dim": 6, "intermediate_size": 40, "max_position_embeddings": 32,
        "rope_theta": 10000.0, "rope_style": "interleaved", "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True, "lambda_init": "exp", "diff_subln": True,
    }
    values.update(overrides)
    return M.Config.from_dict(values)


def run_all(configs, log=print):
    """Run every check; configs are the fixture configs to check gradients on."""
    check_rope()
    check_lambda_init()
    check_safetensors_roundtrip()
    check_adamw_formula()
    check_diff_gqa_pairing()
    check_diff2_adjacent_pairing()
    log("checks passed: rope, lambda_init, safetensors, AdamW formula, diff GQA pairing, "
        "diff2 adjacent pairing")
    for name, cfg in configs:
        check_causality_and_ignore(cfg)
        worst = check_gradients(cfg)
        log(f"checks passed: {name}: causality, ignore id, finite-difference gradients "
            f"(max |fd - autograd| {worst:.1e})")


if __name__ == "__main__":
    from make_fixtures import CASES, case_config
    run_all([(case.name, case_config(case)) for case in CASES])
