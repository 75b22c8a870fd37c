"""Write the Phi-4-mini-flash checkpoint fixtures tests/fixtures/phi4flash/*/ from phi4flash_model.py.

Each case is a tiny Phi4FlashForCausalLM directory as the remote-code Hugging Face checkpoint is
laid out (config.json with `auto_map`, model.safetensors or model-0000k-of-0000n.safetensors
shards with model.safetensors.index.json; F32, or BF16 with A_log, D and the lambda vectors kept
F32) plus tokens.npy (int64 [2, T]) and logits.npy (float32 [2, T, V]) computed in float64 from
the weights as stored. check_phi4flash_model.py runs first; if a check fails nothing is written.
numpy only.
Usage: /usr/bin/python3 tools/oracle/make_phi4flash_fixtures.py [--out DIR]. See README.md "Phi-4-mini-flash".
"""

import argparse
import os
from dataclasses import dataclass, field

import numpy as np

import check_phi4flash_model
import phi4flash_model as M
from hf_checkpoint import fresh_dir, write_json, write_weights
from safetensors_io import round_array_to_storage

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO_ROOT, "tests", "fixtures", "phi4flash")
BATCH = 2
TORCH_DTYPE_NAMES = {"F32": "float32", "BF16": "bfloat16"}
AUTO_MAP = {"AutoConfig": "configuration_phi4flash.Phi4FlashConfig",
            "AutoModelForCausalLM": "modeling_phi4flash.Phi4FlashForCausalLM"}


@dataclass(frozen=True)
class Case:
    name: str
    seed: int
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    window: int
    seq_len: int
    vocab: int = 48
    intermediate: int = 24
    dtype: str = "F32"
    shards: int = 1
    tied: object = None       # None: the key is absent (tied, the class default)
    mamba: dict = field(default_factory=dict)  # the Mamba keys written; {}: none (the defaults apply)


CASES = (
    # 8 layers: every kind once or more (Mamba, sliding, memory Mamba, full, GMU, cross); MHA.
    Case("phi4flash_l8_mha_f32", 401, layers=8, hidden=16, heads=4, kv_heads=4, window=4, seq_len=12,
         mamba={"mb_per_layer": 2, "mamba_d_state": 4, "mamba_d_conv": 4, "mamba_expand": 2,
                "mamba_dt_rank": "auto", "mamba_conv_bias": True, "mamba_proj_bias": False}),
    # The real model's pairing (40 / 20 heads: two pair-heads per key/value pair) scaled down; BF16 shards.
    Case("phi4flash_l8_gqa_bf16_sharded", 402, layers=8, hidden=16, heads=8, kv_heads=4, window=3, seq_len=14,
         dtype="BF16", shards=2, mamba={"mamba_d_state": 4, "mamba_dt_rank": 2}),
    # 4 layers: no cross-decoder layers above h + 1; a window longer than the sequence; tied written out.
    Case("phi4flash_l4_window_over_t_f32", 403, layers=4, hidden=16, heads=2, kv_heads=2, window=16, seq_len=10,
         tied=True, mamba={"mamba_d_state": 2, "mamba_d_conv": 3, "mamba_expand": 1}),
    # 12 layers, no Mamba keys at all (d_state 16, d_conv 4, expand 2, dt_rank ceil(D / 16)); one pair.
    Case("phi4flash_l12_no_mamba_keys_bf16", 404, layers=12, hidden=16, heads=4, kv_heads=2, window=5, seq_len=16,
         dtype="BF16"),
    # Untied head, three F32 shards, a window of 2 and a 2-tap conv.
    Case("phi4flash_l8_untied_f32_sharded", 405, layers=8, hidden=16, heads=4, kv_heads=2, window=2, seq_len=12,
         shards=3, tied=False, mamba={"mamba_d_state": 3, "mamba_d_conv": 2, "mamba_dt_rank": 3}),
)


def phi4flash_config(case):
    """config.json as transformers' save_pretrained writes a remote-code Phi4Flash model."""
    cfg = {
        "architectures": ["Phi4FlashForCausalLM"], "attention_dropout": 0.0, "auto_map": AUTO_MAP,
        "bos_token_id": case.vocab - 1, "embd_pdrop": 0.0, "eos_token_id": case.vocab - 1, "hidden_act": "silu",
        "hidden_size": case.hidden, "initializer_range": 0.02, "intermediate_size": case.intermediate,
        "layer_norm_eps": 1e-5, "max_position_embeddings": 256, "model_type": "phi4flash",
        "num_attention_heads": case.heads, "num_hidden_layers": case.layers, "num_key_value_heads": case.kv_heads,
        "pad_token_id": case.vocab - 1, "resid_pdrop": 0.0, "sliding_window": case.window,
        "torch_dtype": TORCH_DTYPE_NAMES[case.dtype], "transformers_version": "4.46.1", "use_cache": True,
        "vocab_size": case.vocab,
    }
    if case.tied is not None:
        cfg["tie_word_embeddings"] = case.tied
    cfg.update(case.mamba)
    return cfg


def stored_weights(case, params):
    """The float64 values each tensor has once stored (BF16, but F32 for those keeps_float32 names)."""
    return {n: round_array_to_storage("F32" if M.keeps_float32(n) else case.dtype, t) for n, t in params.items()}


def build_case(case):
    """(config dict, Phi4FlashConfig, stored float64 weights, tokens, float64 logits)."""
    config = phi4flash_config(case)
    cfg = M.Phi4FlashConfig.from_dict(config)
    rng = np.random.default_rng(case.seed)
    stored = stored_weights(case, M.init_parameters(cfg, rng))
    tokens = rng.integers(0, cfg.vocab_size, (BATCH, case.seq_len))
    return config, cfg, stored, tokens, M.forward(cfg, stored, tokens)


def patched(name, replacement, run):
    original = getattr(M, name)
    setattr(M, name, replacement)
    try:
        return run()
    finally:
        setattr(M, name, original)


def sensitivity(cfg, stored, tokens, logits):
    """How far the logits move under plausible loader mistakes, to set against the tolerance: a
    window one key wider, lambda_init counted over the attention layers only, the memory taken
    after the silu(z) gate, no D skip."""
    original_visible, original_mamba = M.visible, M.mamba
    runs = {
        "window + 1": lambda: patched("visible", lambda T, w: original_visible(T, w + 1 if w else 0),
                                      lambda: M.forward(cfg, stored, tokens)),
        "lambda_init over attention layers": lambda: patched("lambda_init", lambda l: 0.8 - 0.6 * np.exp(-0.3 * (l // 2)),
                                                             lambda: M.forward(cfg, stored, tokens)),
        "memory after the gate": lambda: patched(
            "mamba", lambda c, p, x: (lambda out, y: (out, y * M.silu(x @ p["in_proj.weight"][c.d_inner:].T)))(
                *original_mamba(c, p, x)), lambda: M.forward(cfg, stored, tokens)),
        "no D skip": lambda: M.forward(cfg, {n: (0 * t if n.endswith(".D") else t) for n, t in stored.items()}, tokens),
    }
    return ", ".join(f"{label} {np.abs(run() - logits).max():.2f}" for label, run in runs.items())


def float32_floor(cfg, stored, tokens, logits):
    """max |float32 rerun - float64| of the same oracle: the floor a float32 engine can reach."""
    f32 = {n: t.astype(np.float32) for n, t in stored.items()}
    rerun = M.forward(cfg, f32, tokens)
    assert rerun.dtype == np.float32, "the rerun must stay in float32"
    return np.abs(rerun.astype(np.float64) - logits).max()


def write_case(case, out_dir, log):
    config, cfg, stored, tokens, logits = build_case(case)
    case_dir = fresh_dir(out_dir, case.name)
    write_json(os.path.join(case_dir, "config.json"), config)
    kept = [n for n in stored if M.keeps_float32(n)]
    write_weights(case_dir, stored, case.dtype, case.shards, kept)
    np.save(os.path.join(case_dir, "tokens.npy"), tokens.astype("<i8"))
    np.save(os.path.join(case_dir, "logits.npy"), logits.astype("<f4"))
    floor = float32_floor(cfg, stored, tokens, logits)
    log(f"{case.name}: {len(stored)} tensors, {sum(t.size for t in stored.values())} parameters, "
        f"max|logit| {np.abs(logits).max():.2f}, float32 rerun max|err| {floor:.1e}; "
        f"{sensitivity(cfg, stored, tokens, logits)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="fixture root (default: %(default)s)")
    args = parser.parse_args()
    check_phi4flash_model.run_checks(fixtures=False)
    for case in CASES:
        write_case(case, args.out, print)
    if os.path.abspath(args.out) == os.path.abspath(DEFAULT_OUT):
        check_phi4flash_model.check_fixtures()


if __name__ == "__main__":
    main()
