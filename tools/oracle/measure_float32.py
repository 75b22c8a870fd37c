"""How closely a plain float32 run of the same model matches the committed float64 fixtures.

Reruns every case of tests/fixtures/oracle in float32 PyTorch (forward, backward, five AdamW
steps) and prints the max abs error per kind of tensor: the floor that any float32
implementation, difftx included, can be expected to reach. README.md quotes its output.
Usage: /usr/bin/python3 tools/oracle/measure_float32.py [--fixtures DIR]
"""

import argparse
import json
import os

import torch

import model as M
from make_fixtures import DEFAULT_OUT, adamw_losses
from safetensors_io import read_safetensors


def measure(case_dir):
    with open(os.path.join(case_dir, "config.json")) as f:
        cfg = M.Config.from_dict(json.load(f))
    weights, _ = read_safetensors(os.path.join(case_dir, "model.safetensors"))
    expected, _ = read_safetensors(os.path.join(case_dir, "expected.safetensors"))
    inputs, targets = expected["inputs"].long(), expected["targets"].long()

    leaves = {n: t.clone().requires_grad_(True) for n, t in weights.items()}
    logits, _ = M.forward(cfg, leaves, inputs)
    loss = M.cross_entropy(logits, targets)
    loss.backward()
    grad_err = max((leaves[n].grad - expected["grad." + n]).abs().max().item() for n in weights)
    grad_max = max(expected["grad." + n].abs().max().item() for n in weights)
    losses = adamw_losses(cfg, weights, inputs, targets).to(torch.float32)
    return {
        "logits": (logits - expected["logits"]).abs().max().item(),
        "loss": (loss - expected["loss"]).abs().max().item(),
        "grad": grad_err,
        "grad/max|grad|": grad_err / grad_max,
        "adamw_losses": (losses - expected["adamw_losses"]).abs().max().item(),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", default=DEFAULT_OUT)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name in sorted(os.listdir(args.fixtures)):
        case_dir = os.path.join(args.fixtures, name)
        if os.path.isdir(case_dir):
            errors = measure(case_dir)
            print(f"{name:22s} " + "  ".join(f"{k} {v:.1e}" for k, v in errors.items()))


if __name__ == "__main__":
    main()
