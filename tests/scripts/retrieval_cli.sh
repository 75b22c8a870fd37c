# Retrieval end to end: a tiny model trained briefly with the task mixture (--mix); a run stopped
# at step 6 and resumed reproduces the uninterrupted run's losses bit for bit, and the mixture
# changes the batches; difftx analyze niah / mqar run on the checkpoint, print their tables and
# write valid JSON of the results schema; bad input gets clear errors.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus
common=(--config "$root/tests/fixtures/train/diff.json" --data "$work/data" --seq-len 128 --micro-batch 4
        --lr 3e-3 --warmup 2 --schedule constant --eval-every 0 --eval-batches 2 --checkpoint-every 6 --quiet)
mix=(--mix niah=0.25,mqar=0.25)

"$difftx" train "${common[@]}" "${mix[@]}" --steps 12 --out "$work/straight"
"$difftx" train "${common[@]}" "${mix[@]}" --steps 6 --out "$work/stopped"
"$difftx" train "${common[@]}" "${mix[@]}" --steps 12 --out "$work/stopped" --resume
"$difftx" train "${common[@]}" --steps 12 --out "$work/text_only"
train_losses() { loss_trajectory "$1" | grep -v " val "; }
train_losses "$work/straight/metrics.jsonl" > "$work/straight.txt"
train_losses "$work/stopped/metrics.jsonl" > "$work/resumed.txt"
train_losses "$work/text_only/metrics.jsonl" > "$work/text_only.txt"
[ "$(wc -l < "$work/straight.txt")" -eq 12 ] || { echo "FAIL: expected 12 train lines"; cat "$work/straight.txt"; exit 1; }
diff "$work/straight.txt" "$work/resumed.txt" || { echo "FAIL: the resumed mixture run's losses differ"; exit 1; }
cmp -s "$work/straight.txt" "$work/text_only.txt" && { echo "FAIL: --mix changed no loss"; exit 1; }
grep -q '"mix"' "$work/straight/run.json" || { echo "FAIL: run.json does not record the mixture"; exit 1; }
grep -q '"mqar": 0.25' "$work/straight/checkpoints/step_00000012/state.json" ||
  { echo "FAIL: the checkpoint does not record the mixture"; exit 1; }

model="$work/straight/checkpoints/step_00000012"
"$difftx" analyze niah --model "$model" --data "$work/data" --contexts 128,256 --needles 1,2 --queried 1,2 \
  --depths 0,1 --samples 2 --json "$work/niah.json" --quiet > "$work/niah.txt"
cat "$work/niah.txt"
grep -q "^    256   2   2 |" "$work/niah.txt" || { echo "FAIL: no table row for context 256, N 2, R 2"; exit 1; }
"$difftx" analyze mqar --model "$model" --data "$work/data" --pairs 8 --queries 4 --samples 10 \
  --json "$work/mqar.json" > "$work/mqar.txt"
cat "$work/mqar.txt"
python3 - "$work/niah.json" "$work/mqar.json" <<'PY'
import json, sys
niah, mqar = (json.load(open(p)) for p in sys.argv[1:3])
assert niah["samples_per_cell"] == 2, niah
cells = niah["cells"]
assert len(cells) == 2 * 3 * 2, len(cells)  # contexts x (N, R) pairs with R <= N x depths
assert {(c["context"], c["needles"], c["queried"], c["depth"]) for c in cells} == \
    {(t, n, r, d) for t in (128, 256) for (n, r) in ((1, 1), (2, 1), (2, 2)) for d in (0.0, 1.0)}
for c in cells:
    assert 0 <= c["accuracy"] <= 1 and c["samples"] == 2, c
for key, want in (("samples", 10), ("pairs", 8), ("queries", 4)):
    assert mqar[key] == want, (key, mqar)
assert 0 <= mqar["accuracy"] <= 1 and mqar["loss"] > 0, mqar
PY

# Bad input.
niah=("$difftx" analyze niah --model "$model" --data "$work/data" --samples 1 --quiet)
expect_error "context 512 exceeds the model's max_position_embeddings 256" "${niah[@]}" --contexts 512
expect_error "R must be <= N" "${niah[@]}" --needles 1 --queried 2
expect_error "is too short for N = 1 needles" "${niah[@]}" --contexts 10 --needles 1 --queried 1
expect_error "--contexts expects a comma-separated list of integers" "${niah[@]}" --contexts 12x
expect_error "the model directory does not exist" "$difftx" analyze niah --model "$work/nope" --data "$work/data"
expect_error "dataset directory does not exist" "$difftx" analyze mqar --model "$model" --data "$work/nope"
expect_error "queries Q = 9 must be in [1, P = 8]" "$difftx" analyze mqar --model "$model" --data "$work/data" --pairs 8 --queries 9
expect_error "unknown target 'needles'" "$difftx" analyze needles
expect_error "unknown task 'copy'" "$difftx" train "${common[@]}" --steps 2 --out "$work/bad" --mix copy=0.1
expect_error "--seq-len 16 is too short for NIAH rows" "$difftx" train --config "$root/tests/fixtures/train/diff.json" \
  --data "$work/data" --seq-len 16 --steps 2 --out "$work/bad" --mix niah=0.5
echo "PASS"
