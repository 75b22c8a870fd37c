# Elastic resume: a checkpoint of a 2-rank run continues on 1 rank (with the same global batch:
# micro-batch 2B), and a 1-rank checkpoint continues on 2 ranks. Checkpoints hold the whole
# optimizer state and the data position is the step, so the resumed run trains on exactly the
# windows the uninterrupted run trains on (identical data digests in every step) and its losses
# follow it within float rounding (tolerances as in mpi_equivalence.sh).
source "$(dirname "$0")/lib.bash"
require_mpi
prepare_small_corpus
common=(--config "$root/tests/fixtures/train/diff2.json" --data "$work/data" --steps 40 --seq-len 64 --lr 3e-3
        --warmup 5 --eval-every 20 --eval-batches 2 --checkpoint-every 20)

# resume_from RUN NEW: a run directory holding RUN's metrics and its checkpoint of step 20.
resume_from() {
  mkdir -p "$2/checkpoints"
  cp -r "$1/checkpoints/step_00000020" "$2/checkpoints/"
  echo step_00000020 > "$2/checkpoints/latest"
  cp "$1/metrics.jsonl" "$2/"
}

mpi_run -np 2 "$difftx" train "${common[@]}" --micro-batch 8 --out "$work/two" --quiet
resume_from "$work/two" "$work/two_then_one"
OMP_NUM_THREADS=1 "$difftx" train "${common[@]}" --micro-batch 16 --out "$work/two_then_one" --resume --log-every 100 \
  | tee "$work/two_then_one.txt"
grep -q "note: resuming on 1 rank (the checkpoint's run used 2)" "$work/two_then_one.txt" ||
  { echo "FAIL: no note about the rank count"; exit 1; }
metrics_match "$work/two/metrics.jsonl" "$work/two_then_one/metrics.jsonl" 1e-5 2e-3

OMP_NUM_THREADS=1 "$difftx" train "${common[@]}" --micro-batch 16 --out "$work/one" --quiet
resume_from "$work/one" "$work/one_then_two"
mpi_run -np 2 "$difftx" train "${common[@]}" --micro-batch 8 --out "$work/one_then_two" --resume --check-replicas --quiet
metrics_match "$work/one/metrics.jsonl" "$work/one_then_two/metrics.jsonl" 1e-5 2e-3

# The first 20 steps of each resumed log are its checkpoint's run's own lines, and the rest
# were trained after the switch: compare only those, against the uninterrupted run of the other
# rank count, which must match too.
metrics_match "$work/one/metrics.jsonl" "$work/two_then_one/metrics.jsonl" 1e-5 2e-3 21
echo "PASS"
