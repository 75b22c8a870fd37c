"""Write the Hugging Face checkpoint fixtures tests/fixtures/hf/<case>/ from hf_model.py.

Each valid case is a tiny LlamaForCausalLM or DiffLlamaForCausalLM directory as transformers
saves it (config.json, model.safetensors or model-0000k-of-0000n.safetensors shards with
model.safetensors.index.json, tensors in F32, BF16 or F16) plus tokens.npy (int64 [2, T]) and
logits.npy (float32 [2, T, V]) computed in float64 from the weights as stored. The bad_* cases
are broken shard indexes for the loader's error tests (no logits). check_hf_model.py runs first;
if a check fails nothing is written.
Usage: /usr/bin/python3 tools/oracle/make_hf_fixtures.py [--out DIR]. See README.md.
"""

import argparse
import dataclasses
import json
import math
import os
from dataclasses import dataclass, field

import numpy as np
import torch

import check_hf_model
import hf_model as HF
import make_hf_bad_indexes
from hf_checkpoint import fresh_dir, write_json, write_weights
from safetensors_io import round_to_storage

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO_ROOT, "tests", "fixtures", "hf")
BATCH = 2
TORCH_DTYPE_NAMES = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}
TRANSFORMERS_VERSION = "4.48.0"
LLAMA3_SHORT = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                "high_freq_factor": 2.0, "original_max_position_embeddings": 16}


@dataclass(frozen=True)
class Case:
    name: str
    seed: int
    model_type: str
    vocab: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    seq_len: int
    layers: int = 2
    dtype: str = "F32"           # storage: F32, BF16 or F16
    tied: bool = True
    shards: int = 1              # 1: model.safetensors; n > 1: index + n shards
    rope_theta: float = 10000.0
    rope_scaling: dict = None
    eos: object = 2              # eos_token_id: int or list
    legacy_llama2_config: bool = False  # no head_dim / rope_theta keys, transformers 4.31 style
    rms_norm_eps: float = 1e-5
    extra: dict = field(default_factory=dict)


CASES = (
    Case("llama_mha_f32", 201, "llama", vocab=96, hidden=32, heads=4, kv_heads=4, head_dim=8,
         intermediate=64, seq_len=12, legacy_llama2_config=True, rms_norm_eps=1e-6,
         extra={"_name_or_path": "meta-llama/Llama-2-7b-hf"}),
    Case("llama_gqa2_bf16_untied_linear_sharded", 202, "llama", vocab=128, hidden=48, heads=4,
         kv_heads=2, head_dim=16, intermediate=96, seq_len=16, dtype="BF16", tied=False, shards=2,
         rope_scaling={"factor": 2.0, "rope_type": "linear", "type": "linear"}, eos=[2, 3]),
    Case("llama_gqa4_f16_llama3_sharded", 203, "llama", vocab=128, hidden=64, heads=4, kv_heads=1,
         head_dim=16, intermediate=96, seq_len=20, dtype="F16", shards=3, rope_theta=1000.0,
         rope_scaling=LLAMA3_SHORT),
    Case("diffllama_mha_f32", 204, "diffllama", vocab=96, hidden=32, heads=4, kv_heads=4,
         head_dim=8, intermediate=64, seq_len=12),
    Case("diffllama_gqa2_bf16_untied_linear_sharded", 205, "diffllama", vocab=128, hidden=64,
         heads=8, kv_heads=4, head_dim=8, intermediate=96, seq_len=16, dtype="BF16", tied=False,
         shards=2, rope_scaling={"factor": 4.0, "rope_type": "linear"}),
    Case("diffllama_kv3_odd_f32_untied", 206, "diffllama", vocab=64, hidden=32, heads=6,
         kv_heads=3, head_dim=8, intermediate=64, seq_len=14, tied=False),
    Case("diffllama_kv1_f16_sharded", 207, "diffllama", vocab=96, hidden=32, heads=4, kv_heads=1,
         head_dim=8, intermediate=64, seq_len=18, dtype="F16", shards=3, eos=[2, 5]),
    Case("diffllama_gqa4_bf16_llama3", 208, "diffllama", vocab=128, hidden=64, heads=8, kv_heads=2,
         head_dim=16, intermediate=64, seq_len=20, dtype="BF16", rope_theta=1000.0,
         rope_scaling={**LLAMA3_SHORT, "factor": 32.0}, eos=[2, 3, 4]),
)

# The valid checkpoint that make_hf_bad_indexes breaks in one place per bad_* case.
BAD_INDEX_BASE = Case("bad_index_base", 209, "llama", vocab=32, hidden=16, heads=2, kv_heads=1,
                      head_dim=8, intermediate=32, seq_len=12, layers=1, dtype="BF16", shards=2)


def transformers_config(case):
    """config.json as transformers' save_pretrained writes it (sorted keys; class keys always)."""
    cfg = {
        "architectures": [HF.MODEL_TYPES[case.model_type]],
        "bos_token_id": 1, "eos_token_id": case.eos, "hidden_act": "silu",
        "hidden_size": case.hidden, "initializer_range": 0.02,
        "intermediate_size": case.intermediate, "max_position_embeddings": 64,
        "model_type": case.model_type, "num_attention_heads": case.heads,
        "num_hidden_layers": case.layers, "num_key_value_heads": case.kv_heads,
        "rms_norm_eps": case.rms_norm_eps, "rope_scaling": case.rope_scaling,
        "tie_word_embeddings": case.tied, "torch_dtype": TORCH_DTYPE_NAMES[case.dtype],
        "use_cache": True, "vocab_size": case.vocab,
    }
    if case.legacy_llama2_config:  # a Llama 2 era file: head_dim = hidden / heads, theta 10000
        assert case.head_dim * case.heads == case.hidden and case.rope_theta == 10000.0
        cfg.update({"pretraining_tp": 1, "transformers_version": "4.31.0.dev0"})
    else:
        cfg.update({"attention_bias": False, "attention_dropout": 0.0, "head_dim": case.head_dim,
                    "rope_theta": case.rope_theta, "transformers_version": TRANSFORMERS_VERSION})
        if case.model_type == "llama":
            cfg.update({"mlp_bias": False, "pretraining_tp": 1})
        else:
            cfg["lambda_std_dev"] = 0.1
    cfg.update(case.extra)
    return cfg


def hf_config(case):
    return HF.HFConfig.from_dict(transformers_config(case))


def check_llama3_bands(case, cfg):
    """A llama3 case must have pairs in all three bands and run past original_max_position."""
    if HF.rope_type(cfg) != "llama3":
        return
    bands = {HF.llama3_band(2 * math.pi / f, cfg.rope_scaling)
             for f in HF.default_frequencies(cfg.rope_theta, cfg.head_dim).tolist()}
    assert bands == {"high", "medium", "low"}, f"{case.name}: llama3 bands {bands}"
    assert case.seq_len > cfg.rope_scaling["original_max_position_embeddings"], case.name


def build_case(case):
    """(config dict, stored float64 weights, tokens, float64 logits)."""
    config = transformers_config(case)
    cfg = HF.HFConfig.from_dict(config)
    check_llama3_bands(case, cfg)
    generator = torch.Generator().manual_seed(case.seed)
    params = HF.init_parameters(cfg, generator)
    stored = {n: round_to_storage(case.dtype, t) for n, t in params.items()}
    tokens = torch.randint(0, cfg.vocab_size, (BATCH, case.seq_len), generator=generator)
    return config, cfg, stored, tokens, HF.forward(cfg, stored, tokens)


def rope_sensitivity(cfg, stored, tokens, logits):
    """How far the logits move when a loader gets the rope scaling wrong: dropped, or (llama3)
    read as plain linear scaling by the same factor. Printed, to set against the tolerance."""
    kind = HF.rope_type(cfg)
    if kind == "default":
        return ""
    wrong = {"dropped": None}
    if kind == "llama3":
        wrong["as linear"] = {"rope_type": "linear", "factor": cfg.rope_scaling["factor"]}
    moved = []
    for label, scaling in wrong.items():
        other = HF.forward(dataclasses.replace(cfg, rope_scaling=scaling), stored, tokens)
        moved.append(f"{label} {(other - logits).abs().max().item():.2f}")
    return f", rope scaling {'; '.join(moved)}"


def write_case(case, out_dir, log):
    config, cfg, stored, tokens, logits = build_case(case)
    case_dir = fresh_dir(out_dir, case.name)
    write_json(os.path.join(case_dir, "config.json"), config)
    write_weights(case_dir, stored, case.dtype, case.shards)
    np.save(os.path.join(case_dir, "tokens.npy"), tokens.numpy().astype("<i8"))
    np.save(os.path.join(case_dir, "logits.npy"), logits.numpy().astype("<f4"))
    # The floor a float32 engine can reach: the same model in float32 PyTorch.
    f32 = HF.forward(cfg, {n: t.to(torch.float32) for n, t in stored.items()}, tokens)
    log(f"{case.name}: {len(stored)} tensors, {sum(t.numel() for t in stored.values())} parameters, "
        f"max|logit| {logits.abs().max().item():.2f}, float32 rerun max|err| "
        f"{(f32.double() - logits).abs().max().item():.1e}{rope_sensitivity(cfg, stored, tokens, logits)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="fixture root (default: %(default)s)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one deterministic reduction order
    check_hf_model.run_all([(case.name, hf_config(case)) for case in CASES])
    for case in CASES:
        write_case(case, args.out, print)
    _, _, stored, _, _ = build_case(BAD_INDEX_BASE)
    make_hf_bad_indexes.write_all(args.out, transformers_config(BAD_INDEX_BASE), stored, print)


if __name__ == "__main__":
    main()
