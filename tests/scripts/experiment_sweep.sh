# difftx experiment sweep end to end on the mini preset: two widths and two budgets for two
# variants over two seeds; sweep.json holds every run, the fits and the matching ratios, the
# report is written; a second run with one more seed trains only that seed; bad input gets
# clear errors before anything trains.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus

mkdir -p "$work/configs/mini"
cp "$root"/tests/fixtures/train/{baseline,diff}.json "$work/configs/mini/"
sweep() {  # sweep OUT [extra options]
  local out="$1"; shift
  "$difftx" experiment sweep --configs "${configs:-$work/configs}" --preset mini --variants baseline,diff --data "$work/data" \
    --out "$out" --widths "${widths:-64,128}" --tokens 4096 --budget-width 64 --budgets "${budgets:-2048,4096}" --seq-len 64 --micro-batch 8 \
    --lr 1e-2 --warmup 2 --eval-every 4 --eval-batches 2 --log-every 4 "$@"
}

sweep "$work/sweep" --seeds 1,2 > "$work/first.txt"
# Points: (64, 4096) on both axes, (128, 4096), (64, 2048): 3 points x 2 variants x 2 seeds.
expect_in "$work/first.txt" "=== sweep point 1 of 3: width 64, 4096 tokens" "=== sweep point 3 of 3: width 64, 2048 tokens" \
  "training tokens; the longest point reads them 0.0" "diff     needs" "of the baseline's parameters" "of the baseline's tokens" "report: $work/sweep/index.html"
for f in sweep.json sweep.svg index.html configs/w128/diff.json points/w128_t4096/runs/diff/seed_2/metrics.jsonl; do
  [ -s "$work/sweep/$f" ] || { echo "FAIL: the sweep lacks $f"; ls -R "$work/sweep" | head -40; exit 1; }
done
[ "$(grep -c '"hidden_size": 128' "$work/sweep/configs/w128/baseline.json")" = 1 ] || { echo "FAIL: width 128 config"; exit 1; }
python3 - "$work/sweep/sweep.json" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))
assert len(s["points"]) == 12, len(s["points"])
both = [p for p in s["points"] if p["width"] == 64 and p["tokens"] == 4096]
assert all(p["axes"] == ["parameters", "tokens"] for p in both), both
for axis in ("parameters", "tokens"):
    f = s["fits"][axis]
    assert len(f["variants"]["baseline"]["per_seed"]) == 2, f
    r = f["matching"]["diff"]["ratio"]
    assert r["n"] == 2 and r["ci95"] is not None and r["mean"] > 0, r
# Passes over the training data: the corpus holds far more than 4096 tokens.
n = s["setup"]["data_train_tokens"]
assert n > 100000 and all(abs(p["passes"] - p["trained_tokens"] / n) < 1e-12 for p in s["points"]), n
big = [p for p in s["points"] if p["width"] == 128][0]
small = [p for p in s["points"] if p["width"] == 64][0]
assert big["non_embedding_parameters"] > 3 * small["non_embedding_parameters"], (big, small)
# Run directories relative to the sweep's own, so a copied sweep keeps its links.
base = os.path.dirname(sys.argv[1])
assert all(not p["run_dir"].startswith("/") and os.path.isfile(os.path.join(base, p["run_dir"], "metrics.jsonl"))
           for p in s["points"]), [p["run_dir"] for p in s["points"]]
PY
grep -q "Scaling sweep" "$work/sweep/index.html" || { echo "FAIL: the sweep page"; exit 1; }

# One more seed: the 12 finished runs are kept, only seed 3 trains.
sweep "$work/sweep" --seeds 1,2,3 > "$work/second.txt"
[ "$(grep -c "finished in an earlier pass" "$work/second.txt")" = 12 ] || { echo "FAIL: finished runs trained again"; cat "$work/second.txt"; exit 1; }
[ -s "$work/sweep/points/w64_t2048/runs/baseline/seed_3/metrics.jsonl" ] || { echo "FAIL: seed 3 did not train"; exit 1; }

widths=64,96 expect_error "does not scale" sweep "$work/bad"
widths=64 expect_error "--widths needs at least two sizes" sweep "$work/bad"
budgets=2048,2048 expect_error "a width or budget is named twice" sweep "$work/bad"
expect_error "a seed is named twice" sweep "$work/bad" --seeds 1,1
# Configs from another preset file under the same OUT: refused before anything trains.
mkdir -p "$work/configs2/mini"
cp "$work/configs/mini/diff.json" "$work/configs2/mini/"
sed 's/"intermediate_size": 192/"intermediate_size": 160/' "$work/configs/mini/baseline.json" > "$work/configs2/mini/baseline.json"
configs="$work/configs2" expect_error "made with other options" sweep "$work/sweep" --seeds 1
echo "experiment sweep: 12 runs trained, fitted and reported; a second run trained only the new seed"
