"""Write the Motif checkpoint fixtures tests/fixtures/hf/motif_*/ from motif_model.py.

Each case is a tiny MotifForCausalLM directory as a remote-code Hugging Face checkpoint is laid
out (config.json with `auto_map`, model.safetensors or model-0000k-of-0000n.safetensors shards
with model.safetensors.index.json, F32 or BF16) plus tokens.npy (int64 [2, T]) and logits.npy
(float32 [2, T, V]) computed in float64 from the weights as stored; the first case also holds a
small byte-level BPE tokenizer.json. check_motif_model.py runs first; if a check fails nothing
is written. numpy only.
Usage: /usr/bin/python3 tools/oracle/make_motif_fixtures.py [--out DIR]. See README.md "Motif".
"""

import argparse
import os
from dataclasses import dataclass

import numpy as np

import check_motif_model
import motif_model as M
from hf_checkpoint import fresh_dir, write_json, write_weights
from safetensors_io import round_array_to_storage

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO_ROOT, "tests", "fixtures", "hf")
BATCH = 2
TORCH_DTYPE_NAMES = {"F32": "float32", "BF16": "bfloat16"}
TRANSFORMERS_VERSION = "4.51.3"
AUTO_MAP = {"AutoConfig": "configuration_motif.MotifConfig",
            "AutoModelForCausalLM": "modeling_motif.MotifForCausalLM"}
# The tokenizer's merges (GPT-2's byte alphabet: "Ġ" is the space byte), ids 256 .. 275.
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("e", "r"), ("o", "n"),
          ("Ġ", "s"), ("r", "e"), ("a", "t"), ("e", "n"), ("Ġ", "w"), ("o", "r"), ("Ġ", "o"),
          ("e", "s"), ("Ġ", "c"), ("i", "s"), ("Ġ", "b"), ("a", "n"), ("Ġ", "f")]
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]  # ids 276 .. 278


@dataclass(frozen=True)
class Case:
    name: str
    seed: int
    model_type: str              # "Motif" or "motif"
    vocab: int
    hidden: int
    heads: int
    kv_heads: int
    noise_heads: object          # None: the key is absent (Motif-2.6B), N = heads / 2
    head_dim: object             # None: the key is absent, d = hidden / heads
    intermediate: int
    seq_len: int
    layers: int = 2
    dtype: str = "F32"
    tied: bool = True
    shards: int = 1
    rope_theta: float = 10000.0
    bos: int = 1
    eos: object = 2
    tokenizer: bool = False


CASES = (
    # Motif-2.6B's layout: no num_noise_heads (r = 1, adjacent heads paired), no head_dim, tied.
    Case("motif_r1_mha_tied_f32_tokenizer", 301, "Motif", vocab=288, hidden=32, heads=4, kv_heads=4,
         noise_heads=None, head_dim=None, intermediate=48, seq_len=12, bos=276, eos=[276, 278], tokenizer=True),
    # r = 1 with two signal heads per key/value pair; H d != D.
    Case("motif_r1_gqa2_bf16_untied_sharded", 302, "motif", vocab=96, hidden=48, heads=8, kv_heads=4,
         noise_heads=None, head_dim=8, intermediate=64, seq_len=16, dtype="BF16", tied=False, shards=2),
    # Motif-2-12.7B's ratio (40 / 8 / 16 heads scaled to 10 / 2 / 4): r = 4, untied, F32 shards.
    Case("motif_r4_untied_f32_sharded", 303, "motif", vocab=96, hidden=32, heads=10, kv_heads=4,
         noise_heads=2, head_dim=8, intermediate=64, seq_len=16, tied=False, shards=3, rope_theta=1e6),
    # r = 4 with one key/value pair shared by every head.
    Case("motif_r4_kv2_bf16", 304, "Motif", vocab=64, hidden=32, heads=10, kv_heads=2,
         noise_heads=2, head_dim=16, intermediate=48, seq_len=20, dtype="BF16"),
    # r = 2 with two noise heads per key/value pair (N / P = 2).
    Case("motif_r2_noise4_kv4_bf16_sharded", 305, "motif", vocab=64, hidden=32, heads=12, kv_heads=4,
         noise_heads=4, head_dim=8, intermediate=48, seq_len=14, dtype="BF16", shards=2),
)


def motif_config(case):
    """config.json as transformers' save_pretrained writes a remote-code Motif model."""
    cfg = {
        "architectures": ["MotifForCausalLM"], "attention_dropout": 0.0, "attn_rms_norm_eps": 1e-5,
        "auto_map": AUTO_MAP, "bos_token_id": case.bos, "eos_token_id": case.eos, "hidden_act": "poly_norm",
        "hidden_size": case.hidden, "initializer_range": 0.02, "intermediate_size": case.intermediate,
        "max_position_embeddings": 64, "model_type": case.model_type,
        "num_attention_heads": case.heads, "num_hidden_layers": case.layers,
        "num_key_value_heads": case.kv_heads, "rms_norm_eps": 1e-6, "rope_scaling": None,
        "rope_theta": case.rope_theta, "sliding_window": None, "tie_word_embeddings": case.tied,
        "torch_dtype": TORCH_DTYPE_NAMES[case.dtype], "transformers_version": TRANSFORMERS_VERSION,
        "use_cache": True, "use_sliding_window": False, "vocab_size": case.vocab,
    }
    if case.noise_heads is not None:
        cfg.update({"num_noise_heads": case.noise_heads, "k_ratio": 1})
    if case.head_dim is not None:
        cfg["head_dim"] = case.head_dim
    return cfg


def byte_alphabet():
    """GPT-2's map from the 256 bytes to printable characters (the byte-level BPE alphabet)."""
    kept = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in kept:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def tokenizer_json():
    """A byte-level BPE tokenizer.json: the 256 bytes (ids 0-255), MERGES, SPECIAL_TOKENS."""
    vocab = {c: i for i, c in enumerate(byte_alphabet())}
    for left, right in MERGES:
        vocab[left + right] = len(vocab)
    added = [{"id": len(vocab) + i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, t in enumerate(SPECIAL_TOKENS)]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": None, "pre_tokenizer": byte_level, "post_processor": byte_level,
            "decoder": byte_level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": False, "vocab": vocab, "merges": [f"{a} {b}" for a, b in MERGES]}}


def build_case(case):
    """(config dict, MotifConfig, stored float64 weights, tokens, float64 logits)."""
    config = motif_config(case)
    cfg = M.MotifConfig.from_dict(config)
    rng = np.random.default_rng(case.seed)
    params = M.init_parameters(cfg, rng)
    stored = {n: round_array_to_storage(case.dtype, t) for n, t in params.items()}
    tokens = rng.integers(0, cfg.vocab_size, (BATCH, case.seq_len))
    return config, cfg, stored, tokens, M.forward(cfg, stored, tokens)


def sensitivity(cfg, stored, tokens, logits):
    """How far the logits move under plausible loader mistakes, to set against the tolerance:
    DiffLlama's lambda_init (no l - 1), the first and second half of the heads as signal and
    noise (DiffLlama's split), no subln gain."""
    moved = {}
    original = M.lambda_init
    M.lambda_init = lambda layer: 0.8 - 0.6 * np.exp(-0.3 * layer)
    try:
        moved["lambda_init without l - 1"] = M.forward(cfg, stored, tokens)
    finally:
        M.lambda_init = original
    halves = dict(stored)
    d, H = cfg.head_dim, cfg.num_attention_heads
    order = ([M.signal_query_head(cfg, j) for j in range(cfg.signal_heads)]
             + [M.noise_query_head(cfg, g) for g in range(cfg.num_noise_heads)])
    for layer in range(cfg.num_hidden_layers):
        name = f"model.layers.{layer}.self_attn.q_proj.weight"
        q = stored[name].reshape(H, d, -1)
        halves[name] = q[np.argsort(order)].reshape(H * d, -1)  # query head order[i] <- head i
    moved["signal heads first, noise heads last"] = M.forward(cfg, halves, tokens)
    no_gain = {n: (np.ones_like(t) if n.endswith("subln.weight") else t) for n, t in stored.items()}
    moved["subln gain dropped"] = M.forward(cfg, no_gain, tokens)
    return ", ".join(f"{label} {np.abs(other - logits).max():.2f}" for label, other in moved.items())


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
    write_weights(case_dir, stored, case.dtype, case.shards)
    if case.tokenizer:
        write_json(os.path.join(case_dir, "tokenizer.json"), tokenizer_json())
    np.save(os.path.join(case_dir, "tokens.npy"), tokens.astype("<i8"))
    np.save(os.path.join(case_dir, "logits.npy"), logits.astype("<f4"))
    floor = float32_floor(cfg, stored, tokens, logits)
    log(f"{case.name}: r {cfg.ratio}, {len(stored)} tensors, {sum(t.size for t in stored.values())} parameters, "
        f"max|logit| {np.abs(logits).max():.2f}, float32 rerun max|err| {floor:.1e}; "
        f"{sensitivity(cfg, stored, tokens, logits)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="fixture root (default: %(default)s)")
    args = parser.parse_args()
    check_motif_model.run_checks()
    for case in CASES:
        write_case(case, args.out, print)


if __name__ == "__main__":
    main()
