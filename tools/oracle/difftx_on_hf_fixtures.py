"""Runs the difftx binary (`difftx logits`) on the HF fixtures and prints its error per case.

Two ways per case in tests/fixtures/hf: `mapped` writes the checkpoint as a difftx model
directory through hf_to_difftx.py (every exact DIFF V1 kv grouping; cases without rope
scaling only, since docs/SPEC.md §3 configs have none) and so checks the map and the fixtures against
the C++ engine with difftx's own loader; `direct` gives the HF directory itself to
`difftx logits`, which needs load_model_dir to read Hugging Face directories. Errors are max
|logit - oracle| over both rows; tests/model/hf_import_test.cpp allows 2e-5 + 2e-5 max|logit|.
Usage: /usr/bin/python3 tools/oracle/difftx_on_hf_fixtures.py [--difftx build/release/difftx]
"""

import argparse
import json
import os
import subprocess
import tempfile

import numpy as np
import torch

import hf_model as HF
import hf_to_difftx
from make_hf_fixtures import DEFAULT_OUT, REPO_ROOT
from safetensors_io import read_safetensors, write_safetensors


def read_checkpoint(case_dir):
    with open(os.path.join(case_dir, "config.json")) as f:
        cfg = HF.HFConfig.from_dict(json.load(f))
    params = {}
    for name in sorted(os.listdir(case_dir)):
        if name.endswith(".safetensors"):
            params.update({n: t.double() for n, t in read_safetensors(os.path.join(case_dir, name))[0].items()})
    return cfg, params


def write_mapped(cfg, params, kv_heads, out_dir):
    os.makedirs(out_dir)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(hf_to_difftx.difftx_config(cfg, kv_heads).to_dict(), f, indent=2)
    mapped = hf_to_difftx.difftx_parameters(cfg, params, kv_heads)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), {n: ("F32", t) for n, t in mapped.items()})


def difftx_error(difftx, model_dir, case_dir, scratch):
    """max |difftx logits - logits.npy| over the rows of tokens.npy, or the error text."""
    tokens, want = np.load(os.path.join(case_dir, "tokens.npy")), np.load(os.path.join(case_dir, "logits.npy"))
    worst = 0.0
    for row in range(tokens.shape[0]):
        out = os.path.join(scratch, f"row{row}.npy")
        run = subprocess.run([difftx, "logits", "--model", model_dir, "--tokens",
                              " ".join(str(t) for t in tokens[row]), "--out", out],
                             capture_output=True, text=True)
        if run.returncode != 0:
            return (run.stderr.strip().splitlines() or ["failed"])[-1]
        worst = max(worst, float(np.abs(np.load(out) - want[row]).max()))
    return f"max|err| {worst:.2e} (max|logit| {np.abs(want).max():.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--difftx", default=os.path.join(REPO_ROOT, "build", "release", "difftx"))
    parser.add_argument("--fixtures", default=DEFAULT_OUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        for case in sorted(os.listdir(args.fixtures)):
            case_dir = os.path.join(args.fixtures, case)
            if not os.path.exists(os.path.join(case_dir, "logits.npy")) or case.startswith("motif_"):
                continue  # bad_* have no logits; motif_* are motif_model.py's (check_motif_model.py)
            print(f"{case:44s} direct  {difftx_error(args.difftx, case_dir, case_dir, scratch)}")
            cfg, params = read_checkpoint(case_dir)
            if HF.rope_type(cfg) != "default":
                continue
            groupings = hf_to_difftx.exact_kv_groupings(cfg) if cfg.model_type == "diffllama" else [None]
            for kv_heads in groupings:
                mapped_dir = os.path.join(scratch, f"{case}_kv{kv_heads}")
                write_mapped(cfg, params, kv_heads, mapped_dir)
                label = f"mapped{'' if kv_heads is None else f' kv {kv_heads}'}"
                print(f"{case:44s} {label:7s} {difftx_error(args.difftx, mapped_dir, case_dir, scratch)}")


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
