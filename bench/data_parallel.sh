#!/usr/bin/env bash
# Data-parallel training on this machine: 1 rank with 2 threads against 2 ranks with 1 thread
# each (mpirun), and 1 rank with 1 thread for reference, on the same global batch, alternating
# the configurations to share out outside load.
# Reports per configuration the median step time, tokens/s and communication time per step
# (time inside collectives, waits for the other rank included) over the steps after warm-up.
#   bench/data_parallel.sh [--preset small] [--steps 12] [--rounds 2] [--seq-len 256] [--batch 16]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=small steps=12 rounds=2 seq=256 batch=16
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --seq-len) seq="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    *) echo "data_parallel.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
difftx=build/release/difftx
data=data/default
[ -f "$data/metadata.json" ] || { echo "data_parallel.sh: $data is missing (difftx prepare --default)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
common=(--config "configs/$preset/diff.json" --data "$data" --steps "$steps" --seq-len "$seq" --warmup 2
        --eval-every 0 --eval-batches 0 --checkpoint-every 0 --quiet)

# summary METRICS: median step ms, tok/s and comm ms over the steps after the first two.
summary() {
  python3 - "$1" <<'PY'
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if '"loss"' in l][2:]
ms = statistics.median(l["ms"] for l in lines)
comm = statistics.median(l.get("comm_ms", 0.0) for l in lines)
print(f"{ms:.0f} {lines[0]['tok_s'] * lines[0]['ms'] / ms:.0f} {comm:.1f}")
PY
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "config | round | step ms | tok/s | comm ms/step"
for round in $(seq "$rounds"); do
  OMP_NUM_THREADS=2 "$difftx" train "${common[@]}" --micro-batch "$batch" --out "$work/one_$round" > /dev/null
  echo "1 rank x 2 threads | $round | $(summary "$work/one_$round/metrics.jsonl" | tr ' ' '|' | sed 's/|/ | /g')"
  mpirun -np 2 --bind-to core -x OMP_NUM_THREADS=1 "$difftx" train "${common[@]}" --micro-batch $((batch / 2)) \
    --out "$work/two_$round" > /dev/null
  echo "2 ranks x 1 thread | $round | $(summary "$work/two_$round/metrics.jsonl" | tr ' ' '|' | sed 's/|/ | /g')"
  OMP_NUM_THREADS=1 "$difftx" train "${common[@]}" --micro-batch "$batch" --out "$work/single_$round" > /dev/null
  echo "1 rank x 1 thread | $round | $(summary "$work/single_$round/metrics.jsonl" | tr ' ' '|' | sed 's/|/ | /g')"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
