"""taps and attention_map against the analyses' own numbers (and `difftx analyze`'s)."""
import json

import numpy as np
import pytest

import difftx
from conftest import run


def first_val_window(data_dir, n):
    """The first n ids of the val split (docs/FORMATS.md: a 64-byte header, then uint16 ids)."""
    raw = (data_dir / "val_000000.bin").read_bytes() if (data_dir / "val_000000.bin").exists() else \
        sorted(data_dir.glob("val_*.bin"))[0].read_bytes()
    assert raw[:8] == b"DTXTOKEN" and int.from_bytes(raw[12:16], "little") == 2
    return np.frombuffer(raw[64:64 + 2 * n], dtype=np.uint16).astype(np.int64)


def test_taps_shapes(diff_model):
    c = diff_model.config
    ids = diff_model.tokenizer.encode("The State of the Union is strong.")
    taps = diff_model.taps(ids)
    L, T = c["num_hidden_layers"], len(ids)
    assert taps["residual"].shape == (L, T, c["hidden_size"])
    assert taps["q"].shape == (L, T, 2 * c["num_attention_heads"] * c["head_dim"])
    assert taps["k"].shape[:2] == (L, T) and taps["attention_output"].shape[:2] == (L, T)
    assert taps["lambda"].shape == (L,)
    # The last layer's residual stream feeds the final norm: its logits are the model's.
    assert np.all(np.isfinite(taps["residual"]))


def test_residual_and_logit_outliers_match_the_analysis(diff_model, data_dir):
    T = 64
    result = difftx.outliers(diff_model, data_dir, tokens=T, seq_len=T, micro_batch=1)
    assert result["sequences"] == 1
    taps = diff_model.taps(first_val_window(data_dir, T))
    c = diff_model.config
    H, d = c["num_attention_heads"], c["head_dim"]
    for layer in result["by_layer"]:
        l = layer["layer"]
        assert np.max(np.abs(taps["residual"][l])) == pytest.approx(layer["hidden_states_top1"], rel=1e-6)
        # Attention logits of every softmax map: map 2i+s is q_s of head i with k_s of its KV
        # head (kernels/attention/variant.h).
        q = taps["q"][l].reshape(T, 2 * H, d).astype(np.float64)
        k = taps["k"][l].reshape(T, 2 * c["num_key_value_heads"], d).astype(np.float64)
        group = H // c["num_key_value_heads"]
        k_of_map = [2 * (m // 2 // group) + m % 2 for m in range(2 * H)]
        logits = np.einsum("tmd,smd->mts", q, k[:, k_of_map]) / np.sqrt(d)
        causal = np.tril(np.ones((T, T), dtype=bool))
        assert np.max(np.abs(logits[:, causal])) == pytest.approx(layer["attention_logits_top1"], rel=1e-4)


def test_attention_map_equals_the_analysis_row(binary, diff_model, diff_dir, data_dir, tmp_path):
    out = tmp_path / "attention.json"
    run(binary, "analyze", "attention", "--model", diff_dir, "--data", data_dir, "--context", 128, "--per-depth", 1,
        "--map-layer", 1, "--map-head", 0, "--json", out)
    cli = json.loads(out.read_text())
    py = difftx.attention(diff_model, data_dir, context=128, per_depth=1, map_layer=1, map_head=0)
    assert py["attention_allocation"] == cli["attention_allocation"]
    m = py["attention_map"]
    assert m["weights"] == cli["attention_map"]["weights"] and m["tokens"] == cli["attention_map"]["tokens"]
    row = difftx.attention_map(diff_model, m["ids"], layer=1, head=0, query=m["query_position"])
    assert row.tolist() == m["weights"]
    raw = difftx.attention_map(diff_model, m["ids"], 1, 0, normalised=False)
    lam = diff_model.taps(m["ids"])["lambda"][1]
    assert raw.sum() == pytest.approx(1 - lam, rel=1e-5)  # A1 - lambda A2 sums to 1 - lambda
    with pytest.raises(difftx.Error, match="head 9 outside"):
        difftx.attention_map(diff_model, m["ids"], 0, 9)


def test_analyses_equal_the_cli(binary, diff_model, diff_dir, data_dir, tmp_path):
    out = tmp_path / "mqar.json"
    run(binary, "analyze", "mqar", "--model", diff_dir, "--data", data_dir, "--samples", 8, "--json", out)
    cli = json.loads(out.read_text())
    py = difftx.mqar(diff_model, data_dir, samples=8)
    assert all(py[key] == cli[key] for key in py if key != "seconds")
    out = tmp_path / "quant.json"
    run(binary, "analyze", "quant", "--model", diff_dir, "--data", data_dir, "--bits", "0,8", "--seq-len", 64,
        "--max-batches", 1, "--quiet", "--json", out)
    assert difftx.quant(diff_model, data_dir, bits=[0, 8], seq_len=64, max_batches=1) == \
        json.loads(out.read_text())["quantization"]
    niah = difftx.niah(diff_model, data_dir, contexts=[128], needles=[1], queried=[1], depths=[0.5], samples=2)
    assert 0 <= niah["mean_accuracy"] <= 1
    ev = difftx.eval(diff_model, data_dir, seq_len=64, max_batches=2)
    cli_eval = run(binary, "eval", "--model", diff_dir, "--data", data_dir, "--seq-len", 64, "--max-batches", 2,
                   "--quiet")
    assert cli_eval.startswith(f"val loss {ev['val_loss']:.4f} | perplexity {ev['perplexity']:.3f}")
