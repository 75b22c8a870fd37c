#!/usr/bin/python3
"""PyTorch CPU peer for `difftx bench train`: the same model, shapes and optimizer, at its best.

Times full training steps (forward, backward, gradient clipping, AdamW) of bench/torch_peer_model.py
(the docs/SPEC.md decoder written for speed, checked against tools/oracle/model.py before anything is
timed) for each config and thread count, and prints JSON lines: one per (config, threads) and the
best per config. Best configuration on this machine class (docs/BENCHMARKS.md, "Training (CPU)"):
- OpenBLAS on its AVX-512 SkylakeX kernels, set explicitly (OpenBLAS 0.3.21's own detection
  depends on the CPU model; on this machine it picks Cooperlake, whose sgemm is the same);
- ATen's AVX-512 elementwise kernels (it defaults to AVX2);
- tcmalloc (Debian's libtcmalloc-minimal4) instead of glibc malloc, which returns the large
  activation buffers to the kernel after every step and faults them back in, page by page, on
  the next (without tcmalloc: glibc tunables that keep what fits under its mmap threshold);
- the faster of 1 and 2 threads.
These are set in the environment before torch loads (the script re-executes itself once);
--plain runs torch as it comes, to measure what the settings buy.

usage: /usr/bin/python3 bench/torch_peer.py --configs FILE[,FILE...] --seq-len T --micro-batch B
                                             [--steps N] [--threads 1,2] [--quick] [--plain]
"""

import argparse
import json
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
GLIBC_KEEP_MEMORY = ("glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=17179869184:"
                     "glibc.malloc.top_pad=1073741824")


def cpu_has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        return False
    return all(x in flags for x in ("avx512f", "avx512bw", "avx512vl", "avx512dq"))


def tuned_environment():
    """The environment of the best configuration, and a short description of it."""
    env, notes = dict(os.environ), []
    if cpu_has_avx512():
        env.setdefault("OPENBLAS_CORETYPE", "SkylakeX")
        env.setdefault("ATEN_CPU_CAPABILITY", "avx512")
    if os.path.exists(TCMALLOC):
        env["LD_PRELOAD"] = TCMALLOC + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
        notes.append("tcmalloc")
    else:
        env["GLIBC_TUNABLES"] = GLIBC_KEEP_MEMORY
        notes.append("glibc malloc keeping freed memory (libtcmalloc-minimal4 not installed)")
    return env, notes


def reexec_tuned(args):
    """Runs this script again under the tuned environment (once)."""
    if args.plain or os.environ.get("DIFFTX_TORCH_PEER_TUNED") == "1":
        return
    env, notes = tuned_environment()
    env["DIFFTX_TORCH_PEER_TUNED"] = "1"
    env["DIFFTX_TORCH_PEER_NOTES"] = ", ".join(notes)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def time_steps(torch, oracle, peer_model, cfg, batch, seq_len, steps, threads):
    """Best wall time and best process CPU time (user, system) of `steps` training steps after
    one warm-up."""
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(0)
    named = oracle.init_parameters(cfg, gen, dtype=torch.float32, linear_std=0.02, embed_std=0.02, gain_std=0.0,
                                   lambda_std=0.1)
    model = peer_model.PeerModel(cfg, named)
    params = model.parameters()
    for p in params:
        p.requires_grad_(True)
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-4, betas=(0.9, 0.95), eps=1e-8, foreach=True)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq_len + 1), generator=gen)
    inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
    best, best_cpu = float("inf"), (float("inf"), 0.0, 0.0)
    for i in range(steps + 1):  # step 0 warms up
        user0, sys0 = cpu_seconds()
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        model.loss(inputs, targets).backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if i > 0:
            best = min(best, time.perf_counter() - start)
            user1, sys1 = cpu_seconds()
            best_cpu = min(best_cpu, (user1 - user0 + sys1 - sys0, user1 - user0, sys1 - sys0))
    return best, best_cpu[1], best_cpu[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", required=True, help="comma-separated config.json files")
    ap.add_argument("--seq-len", type=int, required=True)
    ap.add_argument("--micro-batch", type=int, required=True)
    ap.add_argument("--steps", type=int, default=2, help="timed steps per thread count (best kept)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--quick", action="store_true", help="1 timed step per thread count")
    ap.add_argument("--plain", action="store_true", help="torch as it comes: no environment tuning")
    args = ap.parse_args()
    reexec_tuned(args)

    import torch  # noqa: E402  (after the environment is final)
    sys.path.insert(0, os.path.join(HERE, "..", "tools", "oracle"))
    sys.path.insert(0, HERE)
    import model as oracle  # noqa: E402
    import torch_peer_model as peer_model  # noqa: E402

    peer_model.check_against_oracle(oracle)
    torch.set_flush_denormal(True)
    steps = 1 if args.quick else args.steps
    tokens = args.micro_batch * args.seq_len
    setup = "torch {} ({}), OpenBLAS {}, ATen {}, {}".format(
        torch.__version__, "tuned" if not args.plain else "plain", os.environ.get("OPENBLAS_CORETYPE", "own choice"),
        os.environ.get("ATEN_CPU_CAPABILITY", "default"),
        os.environ.get("DIFFTX_TORCH_PEER_NOTES", "glibc malloc") if not args.plain else "glibc malloc")
    for path in args.configs.split(","):
        with open(path) as f:
            cfg = oracle.Config.from_dict(json.load(f))
        best = None
        for threads in [int(t) for t in args.threads.split(",")]:
            seconds, user, sys_ = time_steps(torch, oracle, peer_model, cfg, args.micro_batch, args.seq_len, steps,
                                             threads)
            row = {"op": "torch_train_step", "config": path, "variant": cfg.attention, "threads": threads,
                   "ms": seconds * 1e3, "tok_s": tokens / seconds, "cpu_ms": (user + sys_) * 1e3, "user_s": user,
                   "sys_s": sys_}
            print(json.dumps(row), flush=True)
            if best is None or row["tok_s"] > best["tok_s"]:
                best = row
        print(json.dumps(dict(best, op="torch_best", setup=f"{setup}, {best['threads']} thread(s)")), flush=True)


if __name__ == "__main__":
    main()
