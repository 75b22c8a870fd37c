"""Write the golden fixtures tests/fixtures/oracle/<case>/ from the reference model.

Each case directory gets config.json, model.safetensors (the weights) and
expected.safetensors (tokens, logits, loss, every gradient, lambdas and the losses of five
AdamW steps). Everything is computed in float64 from the float32 weights and stored as F32.
Usage: /usr/bin/python3 tools/oracle/make_fixtures.py [--out DIR]. See README.md.
"""

import argparse
import json
import os
from dataclasses import dataclass, field

import torch

import check_model
import model as M
from safetensors_io import write_safetensors

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO_ROOT, "tests", "fixtures", "oracle")

BATCH, SEQ_LEN = 2, 12
IGNORED_POSITIONS = ((0, 4), (1, 0), (1, SEQ_LEN - 1))  # (row, position) whose target is -1
ADAMW = {"lr": 1e-2, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.1}
ADAMW_STEPS = 5

BASE_CONFIG = {
    "model_type": "difftx", "vocab_size": 61, "hidden_size": 32, "num_hidden_layers": 2,
    "head_dim": 8, "intermediate_size": M.default_intermediate_size(32),
    "max_position_embeddings": 64, "rope_theta": 10000.0, "rope_style": "interleaved",
    "rms_norm_eps": 1e-5, "tie_word_embeddings": True, "lambda_init": "exp", "diff_subln": True,
}


@dataclass(frozen=True)
class Case:
    name: str
    seed: int
    overrides: dict = field(default_factory=dict)


CASES = (
    Case("baseline", 101, {"attention": "baseline", "num_attention_heads": 4, "num_key_value_heads": 4}),
    Case("diff", 102, {"attention": "diff", "num_attention_heads": 2, "num_key_value_heads": 2}),
    Case("diff2", 103, {"attention": "diff2", "num_attention_heads": 2, "num_key_value_heads": 2}),
    Case("baseline_gqa2_untied", 104, {"attention": "baseline", "num_attention_heads": 4,
                                       "num_key_value_heads": 2, "tie_word_embeddings": False}),
    Case("diff_gqa2", 105, {"attention": "diff", "num_attention_heads": 2, "num_key_value_heads": 1}),
    Case("diff2_gqa2_half_rope", 106, {"attention": "diff2", "num_attention_heads": 2,
                                       "num_key_value_heads": 1, "rope_style": "half"}),
    Case("diff_ablation", 107, {"attention": "diff", "num_attention_heads": 2,
                                "num_key_value_heads": 2, "diff_subln": False, "lambda_init": 0.5}),
)


def case_config(case):
    return M.Config.from_dict({**BASE_CONFIG, **case.overrides})


def make_batch(cfg, generator):
    """inputs = tokens[:, :T], targets = tokens[:, 1:] with IGNORED_POSITIONS set to -1."""
    tokens = torch.randint(0, cfg.vocab_size, (BATCH, SEQ_LEN + 1), generator=generator)
    inputs, targets = tokens[:, :-1].clone(), tokens[:, 1:].clone()
    for row, position in IGNORED_POSITIONS:
        targets[row, position] = M.IGNORE_ID
    return inputs, targets


def adamw_losses(cfg, params, inputs, targets):
    """Loss after k = 0..ADAMW_STEPS AdamW updates on this batch; decay only tensors with ndim >= 2."""
    leaves = {n: t.clone().requires_grad_(True) for n, t in params.items()}
    decay = [t for t in leaves.values() if t.dim() >= 2]
    no_decay = [t for t in leaves.values() if t.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": ADAMW["weight_decay"]},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=ADAMW["lr"], betas=ADAMW["betas"], eps=ADAMW["eps"])
    losses = []
    for step in range(ADAMW_STEPS + 1):
        optimizer.zero_grad()
        loss = M.loss_of(cfg, leaves, inputs, targets)
        losses.append(loss.item())
        if step < ADAMW_STEPS:
            loss.backward()
            optimizer.step()
    return torch.tensor(losses, dtype=torch.float64)


def build_case(case):
    """All tensors of one fixture, computed in float64."""
    cfg = case_config(case)
    generator = torch.Generator().manual_seed(case.seed)
    params = M.init_parameters(cfg, generator)
    inputs, targets = make_batch(cfg, generator)

    leaves = {n: t.clone().requires_grad_(True) for n, t in params.items()}
    logits, extras = M.forward(cfg, leaves, inputs)
    loss = M.cross_entropy(logits, targets)
    loss.backward()

    expected = {"inputs": ("I32", inputs), "targets": ("I32", targets),
                "logits": ("F32", logits), "loss": ("F32", loss.reshape(1))}
    for layer, extra in enumerate(extras):
        if cfg.attention == "diff":
            expected[f"lambda.{layer}"] = ("F32", extra["lambda"].reshape(1))
        elif cfg.attention == "diff2":
            expected[f"lambda_sigmoid.{layer}"] = ("F32", extra["lambda"])
    for name, leaf in leaves.items():
        expected[f"grad.{name}"] = ("F32", leaf.grad)
    losses = adamw_losses(cfg, params, inputs, targets)
    assert abs(losses[0].item() - loss.item()) < 1e-12, "adamw_losses[0] must equal loss"
    expected["adamw_losses"] = ("F32", losses)
    weights = {name: ("F32", t) for name, t in params.items()}
    return cfg, weights, expected, losses


def expected_metadata(case):
    return {
        "format": "pt",
        "generator": "tools/oracle/make_fixtures.py",
        "case": case.name,
        "seed": str(case.seed),
        "precision": "computed in float64 from the F32 weights of model.safetensors, stored as F32",
        "ignore_id": str(M.IGNORE_ID),
        "loss": "mean cross-entropy over targets != -1",
        "adamw": (f"torch.optim.AdamW lr={ADAMW['lr']} betas={ADAMW['betas']} eps={ADAMW['eps']} "
                  f"weight_decay={ADAMW['weight_decay']} on tensors with ndim >= 2, 0 on 1-D; "
                  f"no clipping; constant lr; adamw_losses[k] = loss after k steps"),
        "torch": torch.__version__,
    }


def write_case(case, out_dir, log):
    cfg, weights, expected, losses = build_case(case)
    case_dir = os.path.join(out_dir, case.name)
    os.makedirs(case_dir, exist_ok=True)
    with open(os.path.join(case_dir, "config.json"), "w") as f:
        json.dump(cfg.to_dict(), f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(case_dir, "model.safetensors"), weights,
                      {"format": "pt", "generator": "tools/oracle/make_fixtures.py"})
    write_safetensors(os.path.join(case_dir, "expected.safetensors"), expected,
                      expected_metadata(case))
    trajectory = " ".join(f"{x:.6f}" for x in losses.tolist())
    log(f"{case.name}: {len(weights)} tensors, "
        f"{sum(t.numel() for _, t in weights.values())} parameters, adamw_losses {trajectory}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="fixture root (default: %(default)s)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one deterministic reduction order
    check_model.run_all([(case.name, case_config(case)) for case in CASES])
    for case in CASES:
        write_case(case, args.out, print)


if __name__ == "__main__":
    main()
