# Faults: when one rank of a 2-rank run dies (SIGKILL) mid-training, mpirun stops the other
# within a bounded time with a clear message, the last checkpoint is intact, and resuming on 2
# ranks reproduces the uninterrupted run's losses bit for bit. A rank that hangs instead
# (SIGSTOP) is caught by the collective timeout on the other rank, also in bounded time.
source "$(dirname "$0")/lib.bash"
require_mpi
# On any exit, no rank is left writing into $work while it is removed.
trap 'pkill -9 -f -- "--out $work/" 2>/dev/null && sleep 0.2; rm -rf "$work"' EXIT
prepare_small_corpus
common=(--config "$root/tests/fixtures/train/baseline.json" --data "$work/data" --steps 100 --seq-len 64
        --micro-batch 4 --lr 3e-3 --warmup 5 --eval-every 50 --eval-batches 2 --checkpoint-every 10 --quiet)

# The pid of rank $2 of the run writing to $1 ($job), waited for up to 10 s: on a loaded machine
# the rank's process can be missing from one listing. Fails (stopping $job) if it never shows.
rank_pid() {
  local p tries
  for tries in $(seq 100); do
    for p in $(pgrep -f -- "--out $1"); do
      if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then echo "$p"; return; fi
    done
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL: rank $2 of the run in $1 not found" >&2
  kill -9 "$job" 2>/dev/null; wait "$job" 2>/dev/null
  exit 1
}

# start_and_wait RUN_DIR [options]: an mpirun in the background ($job) that has logged 25 steps.
start_and_wait() {
  local out="$1"; shift
  mpi_run -np 2 "$difftx" train "${common[@]}" --out "$out" "$@" > "$out.log" 2>&1 &
  job=$!
  while [ "$(train_lines "$out/metrics.jsonl")" -lt 25 ]; do
    kill -0 "$job" 2>/dev/null || { echo "FAIL: the run ended before the fault"; cat "$out.log"; exit 1; }
    sleep 0.02
  done
}

# expect_stopped LIMIT_SECONDS MESSAGE...: $job ends, non-zero, within the limit, saying each message.
expect_stopped() {
  local limit="$1" start="$SECONDS" status=0; shift
  while kill -0 "$job" 2>/dev/null; do
    [ $((SECONDS - start)) -le "$limit" ] || { echo "FAIL: still running after $limit s"; kill -9 "$job"; exit 1; }
    sleep 0.1
  done
  wait "$job" || status=$?
  echo "stopped after $((SECONDS - start)) s with status $status"
  [ "$status" -ne 0 ] || { echo "FAIL: mpirun exited 0"; exit 1; }
  for message in "$@"; do
    grep -qF "$message" "$log" || { echo "FAIL: expected '$message' in:"; cat "$log"; exit 1; }
  done
}

mpi_run -np 2 "$difftx" train "${common[@]}" --out "$work/straight"

# A rank dies.
start_and_wait "$work/killed"
log="$work/killed.log"
victim="$(rank_pid "$work/killed" 1)" || exit 1
kill -9 "$victim"
expect_stopped 30 "exited on signal 9" "rank 0 of 2 stopped by SIGTERM"
last="$(cat "$work/killed/checkpoints/latest")"
echo "latest checkpoint after the kill: $last"
"$difftx" logits --model "$work/killed/checkpoints/$last" --tokens "1 2 3" --out "$work/logits.npy" > /dev/null
mpi_run -np 2 "$difftx" train "${common[@]}" --out "$work/killed" --resume
loss_trajectory "$work/straight/metrics.jsonl" > "$work/straight.txt"
loss_trajectory "$work/killed/metrics.jsonl" > "$work/resumed.txt"
[ "$(wc -l < "$work/straight.txt")" -eq 102 ] || { echo "FAIL: expected 100 train + 2 val lines"; exit 1; }
diff "$work/straight.txt" "$work/resumed.txt" || { echo "FAIL: the resumed run's losses differ"; exit 1; }

# A rank hangs: the other's collective times out.
start_and_wait "$work/stopped" --collective-timeout 3
log="$work/stopped.log"
victim="$(rank_pid "$work/stopped" 1)" || exit 1
kill -STOP "$victim"
expect_stopped 30 "difftx: error: rank 0 of 2: " "has waited 3 s for the other ranks; a rank died or hangs" \
  "the last checkpoint is intact"
for _ in $(seq 50); do kill -0 "$victim" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$victim" 2>/dev/null; then echo "FAIL: mpirun left the stopped rank behind"; kill -9 "$victim"; exit 1; fi
last="$(cat "$work/stopped/checkpoints/latest")"
"$difftx" logits --model "$work/stopped/checkpoints/$last" --tokens "1 2 3" --out "$work/logits.npy" > /dev/null
echo "PASS"
