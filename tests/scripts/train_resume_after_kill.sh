# Stop and resume gives the same losses as no stop: a run killed with SIGKILL mid-training and
# resumed from its last checkpoint must reproduce an uninterrupted run's loss trajectory bit
# for bit (same seed, same options).
source "$(dirname "$0")/lib.bash"
prepare_small_corpus
common=(--config "$root/tests/fixtures/train/diff.json" --data "$work/data" --steps 60 --seq-len 128
        --micro-batch 8 --lr 3e-3 --warmup 5 --eval-every 20 --checkpoint-every 10 --quiet)

"$difftx" train "${common[@]}" --out "$work/straight"

"$difftx" train "${common[@]}" --out "$work/killed" &
pid=$!
while [ "$(train_lines "$work/killed/metrics.jsonl")" -lt 25 ]; do
  kill -0 "$pid" 2>/dev/null || { echo "FAIL: the run ended before it could be killed"; exit 1; }
  sleep 0.02
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
done_steps="$(train_lines "$work/killed/metrics.jsonl")"
echo "killed after step $done_steps, latest checkpoint: $(cat "$work/killed/checkpoints/latest")"
[ "$done_steps" -ge 25 ] && [ "$done_steps" -lt 60 ] || { echo "FAIL: the kill did not land mid-run"; exit 1; }

"$difftx" train "${common[@]}" --out "$work/killed" --resume

loss_trajectory "$work/straight/metrics.jsonl" > "$work/straight.txt"
loss_trajectory "$work/killed/metrics.jsonl" > "$work/resumed.txt"
[ "$(wc -l < "$work/straight.txt")" -eq 63 ] || { echo "FAIL: expected 60 train + 3 val lines"; cat "$work/straight.txt"; exit 1; }
if ! diff "$work/straight.txt" "$work/resumed.txt"; then
  echo "FAIL: the resumed run's losses differ from the uninterrupted run's"
  exit 1
fi
# The checkpoint is a complete model directory.
cmp "$work/straight/checkpoints/step_00000060/model.safetensors" "$work/killed/checkpoints/step_00000060/model.safetensors"
echo "PASS: resumed trajectory identical over $(wc -l < "$work/straight.txt") lines"
