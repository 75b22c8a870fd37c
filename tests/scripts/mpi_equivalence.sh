# Data parallelism changes nothing but speed: 2 ranks with micro-batch B train on the same
# windows in every step as 1 rank with micro-batch 2B (and as gradient accumulation over B-row
# micro-batches, on 1 or 2 ranks), with the same losses up to float rounding, which differs
# with the summation order: over these 30 steps the train and val losses agree to 1e-5
# relative (differences seen: ~1e-8) and the gradient norms to 2e-3 (seen: ~4e-5; see
# metrics_match.py). The ranks' parameters are compared after every step (--check-replicas),
# and only rank 0 prints. Validation reads eval-batches x micro-batch x ranks windows, so the
# accumulated runs evaluate 8 micro-batches to see the same 64 windows. The same holds with
# retrieval task rows mixed in (--mix).
source "$(dirname "$0")/lib.bash"
require_mpi
prepare_small_corpus
# A single-process run needs no MPI: the binary does not link it.
if ldd "$difftx" | grep -i mpi; then echo "FAIL: $difftx links MPI"; exit 1; fi

common=(--config "$root/tests/fixtures/train/diff.json" --data "$work/data" --steps 30 --seq-len 64 --lr 3e-3
        --warmup 5 --eval-every 10 --checkpoint-every 0)
OMP_NUM_THREADS=1 "$difftx" train "${common[@]}" --micro-batch 16 --eval-batches 4 --out "$work/one" --quiet
mpi_run -np 2 "$difftx" train "${common[@]}" --micro-batch 8 --eval-batches 4 --out "$work/two" --check-replicas \
  --bucket-mb 0.1 \
  --log-every 10 | tee "$work/two.txt"
[ "$(grep -c '^done:' "$work/two.txt")" -eq 1 ] && [ "$(grep -c '^step    10/30' "$work/two.txt")" -eq 1 ] ||
  { echo "FAIL: expected rank 0 alone to print"; exit 1; }
grep -q "2 ranks x 1 x 8 x 64" "$work/two.txt" || { echo "FAIL: no 2-rank header"; exit 1; }
[ "$(ls "$work/two/checkpoints")" = "$(printf 'latest\nstep_00000030')" ] || { echo "FAIL: checkpoints"; exit 1; }
metrics_match "$work/one/metrics.jsonl" "$work/two/metrics.jsonl" 1e-5 2e-3

OMP_NUM_THREADS=1 "$difftx" train "${common[@]}" --micro-batch 8 --batch-tokens 1024 --eval-batches 8 \
  --out "$work/accumulated" --quiet
metrics_match "$work/one/metrics.jsonl" "$work/accumulated/metrics.jsonl" 1e-5 2e-3
mpi_run -np 2 "$difftx" train "${common[@]}" --micro-batch 4 --batch-tokens 1024 --eval-batches 8 \
  --out "$work/two_accumulated" --quiet
metrics_match "$work/one/metrics.jsonl" "$work/two_accumulated/metrics.jsonl" 1e-5 2e-3

# The retrieval mixture (--mix) chooses task rows by their index in the global batch, so 2 ranks
# accumulating 2 micro-batches of 2 rows train on the 8 rows 1 rank x 8 rows trains on.
mix=(--config "$root/tests/fixtures/train/diff.json" --data "$work/data" --steps 8 --seq-len 128 --lr 3e-3
     --warmup 2 --eval-every 0 --checkpoint-every 0 --quiet --mix niah=0.25,mqar=0.25)
OMP_NUM_THREADS=1 "$difftx" train "${mix[@]}" --micro-batch 8 --eval-batches 1 --out "$work/mix_one"
mpi_run -np 2 "$difftx" train "${mix[@]}" --micro-batch 2 --batch-tokens 1024 --eval-batches 2 --out "$work/mix_two"
metrics_match "$work/mix_one/metrics.jsonl" "$work/mix_two/metrics.jsonl" 1e-5 2e-3
echo "PASS"
