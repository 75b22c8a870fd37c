#!/usr/bin/python3
"""PyTorch CPU peer for `difftx bench train`: the same model, shapes and optimizer, at its best.

Runs the oracle's model (tools/oracle/model.py, written from SPEC.md) in float32 with
torch.optim.AdamW, one full training step (forward, backward, optimizer) per iteration, for
each thread count given, and prints one JSON line per thread count plus the best. OpenBLAS is
pointed at its AVX-512 SkylakeX kernels before torch loads it (its own detection picks AVX2
on Zen 4/5), which is the fastest configuration on this machine.

usage: /usr/bin/python3 bench/torch_peer.py --config FILE --seq-len T --micro-batch B
                                             [--steps N] [--threads 1,2]
"""

import argparse
import json
import os
import sys
import time

os.environ["OPENBLAS_CORETYPE"] = os.environ.get("DIFFTX_BLAS_CORETYPE", "SkylakeX")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "oracle"))

import torch  # noqa: E402  (after OPENBLAS_CORETYPE is set)

import model as oracle  # noqa: E402


def time_steps(cfg, batch, seq_len, steps, threads):
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(0)
    params = oracle.init_parameters(cfg, gen, dtype=torch.float32, linear_std=0.02, embed_std=0.02,
                                    gain_std=0.0, lambda_std=0.1)
    for p in params.values():
        p.requires_grad_(True)
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8, foreach=True)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq_len + 1), generator=gen)
    inputs, targets = ids[:, :-1], ids[:, 1:]
    times = []
    for i in range(steps + 1):  # the first step warms up
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = oracle.loss_of(cfg, params, inputs, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params.values(), 1.0)
        opt.step()
        if i > 0:
            times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--seq-len", type=int, required=True)
    ap.add_argument("--micro-batch", type=int, required=True)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    with open(args.config) as f:
        cfg = oracle.Config.from_dict(json.load(f))
    tokens = args.micro_batch * args.seq_len
    best = None
    for threads in [int(t) for t in args.threads.split(",")]:
        seconds = time_steps(cfg, args.micro_batch, args.seq_len, args.steps, threads)
        row = {"op": "torch_train_step", "threads": threads, "ms": seconds * 1e3, "tok_s": tokens / seconds}
        print(json.dumps(row), flush=True)
        if best is None or row["tok_s"] > best["tok_s"]:
            best = row
    best = dict(best, op="torch_best", torch=torch.__version__, blas=os.environ["OPENBLAS_CORETYPE"])
    print(json.dumps(best), flush=True)


if __name__ == "__main__":
    main()
