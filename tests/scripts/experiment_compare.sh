# difftx experiment compare end to end on a tiny preset: every model is trained for the same
# tokens and analysed, results.json holds every object of the schema for each, the report is
# written; a second run with the same arguments trains and analyses nothing again and keeps the
# training record; with --seeds every variant is trained per seed and results.json holds the
# statistics over the seeds; bad input gets clear errors.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus

mkdir -p "$work/configs/mini"
cp "$root"/tests/fixtures/train/{baseline,diff,diff2}.json "$work/configs/mini/"
compare() {  # compare OUT [extra options]
  local out="$1"; shift
  "$difftx" experiment compare --configs "$work/configs" --preset "${preset:-mini}" --tokens "${tokens:-16384}" --data "$work/data" \
    --out "$out" --seq-len 128 --micro-batch 8 --lr 1e-2 --warmup 5 --mix niah=0.25,mqar=0.25 \
    --eval-every 8 --eval-batches 2 --log-every 8 --niah-contexts 128 --niah-needles 1,2 --niah-queried 1 \
    --niah-depths 0,1 --niah-samples 2 --mqar-pairs 4 --mqar-samples 10 --attention-prompts 1 \
    --outlier-tokens 1024 --bits 0,8,4 --quant-batches 2 "$@"
}

compare "$work/report" > "$work/first.txt"
expect_in "$work/first.txt" "compare: 3 models of preset mini, 16 steps of 1024 tokens each" \
  "== baseline (1 of 3)" "== diff (2 of 3)" "== diff2 (3 of 3)" "NIAH: mean accuracy" "MQAR: accuracy" \
  "attention allocation" "outliers" "quantization" "val loss" "report: $work/report/index.html"
for f in results.json index.html loss_curves.svg niah_heatmap.svg attention_map.svg outliers.svg quantization.svg; do
  [ -s "$work/report/$f" ] || { echo "FAIL: the report lacks $f"; ls "$work/report"; exit 1; }
done
results="$work/report/results.json"
expect_in "$results" '"schema": "difftx.experiment.compare/1"' '"tokens_per_model": 16384' '"mixture"' \
  '"niah": 0.25' '"name": "baseline"' '"name": "diff"' '"name": "diff2"' '"val_curve"' '"cells"' \
  '"attention_allocation"' '"attention_map"' '"attention_logits"' '"niah_accuracy"'
[ "$(grep -c '"final_val_loss"' "$results")" = 3 ] || { echo "FAIL: not three trained models in $results"; exit 1; }
for m in baseline diff diff2; do
  [ "$(train_lines "$work/report/runs/$m/metrics.jsonl")" = 16 ] || { echo "FAIL: $m did not train 16 steps"; exit 1; }
done

# Again with the same arguments: nothing is trained or analysed again and the record is the same.
cp "$work/report/runs/diff/metrics.jsonl" "$work/diff_metrics.jsonl"
compare "$work/report" > "$work/second.txt"
expect_in "$work/second.txt" "== diff (2 of 3)" "finished in an earlier pass: its results are kept"
if grep -q "^analysing" "$work/second.txt"; then echo "FAIL: the second compare analysed again"; exit 1; fi
if grep -q "^step " "$work/second.txt"; then echo "FAIL: the second compare trained again:"; grep "^step " "$work/second.txt"; exit 1; fi
cmp "$work/report/runs/diff/metrics.jsonl" "$work/diff_metrics.jsonl" || { echo "FAIL: metrics changed on the second run"; exit 1; }

# Two seeds: each variant once per seed in runs/VARIANT/seed_S, the statistics in results.json and
# the table; a run stopped after the first model keeps it and trains the rest.
tokens=8192 compare "$work/seeds" --variants baseline,diff --seeds 3,4 > "$work/seeds.txt"
expect_in "$work/seeds.txt" "== baseline, seed 3 (1 of 4)" "== diff, seed 4 (4 of 4)" "over 2 seeds" \
  "diff - baseline, val_loss:"
for m in baseline diff; do for s in 3 4; do
  [ "$(train_lines "$work/seeds/runs/$m/seed_$s/metrics.jsonl")" = 8 ] || { echo "FAIL: $m seed $s did not train 8 steps"; exit 1; }
done; done
expect_in "$work/seeds/results.json" '"statistics"' '"paired_to_baseline"' '"outside_seed_noise"' '"seeds": [' \
  '"seed": 4' '"ci95"' '"mean_accuracy_ci95"'
cmp -s "$work/seeds/runs/baseline/seed_3/metrics.jsonl" "$work/seeds/runs/baseline/seed_4/metrics.jsonl" \
  && { echo "FAIL: seeds 3 and 4 trained the same"; exit 1; }
tokens=8192 compare "$work/seeds" --variants baseline,diff --seeds 3,4 > "$work/seeds2.txt"
[ "$(grep -c "finished in an earlier pass" "$work/seeds2.txt")" = 4 ] || { echo "FAIL: seeds rerun"; cat "$work/seeds2.txt"; exit 1; }
# A seed added later: the finished seeds are kept, only the new one trains.
tokens=8192 compare "$work/seeds" --variants baseline,diff --seeds 3,4,5 > "$work/seeds3.txt"
[ "$(grep -c "finished in an earlier pass" "$work/seeds3.txt")" = 4 ] || { echo "FAIL: seeds rerun"; cat "$work/seeds3.txt"; exit 1; }
expect_in "$work/seeds3.txt" "== diff, seed 5 (6 of 6)" "over 3 seeds"
expect_in "$work/seeds/results.json" '"seeds": [' '"seed": 5'
[ -s "$work/seeds/seed_spread.svg" ] || { echo "FAIL: the multi-seed report lacks seed_spread.svg"; ls "$work/seeds"; exit 1; }
expect_in "$work/seeds/index.html" "Across seeds" "diff, seed 5" "Every variant trained once per seed (3, 4, 5)"
expect_error "a seed is named twice" compare "$work/bad" --seeds 1,1

# --init-from: a second stage starts each run from the last checkpoint of the same variant and seed
# in an earlier compare (train --init), and says so in run.json, results.json and the page.
tokens=4096 compare "$work/stage2" --variants baseline,diff --seeds 3,4 --init-from "$work/seeds" > "$work/stage2.txt"
expect_in "$work/stage2.txt" "each run starts from the same variant and seed's last checkpoint in $work/seeds" \
  "starting from the weights of $work/seeds/runs/diff/seed_4/checkpoints/step_"
expect_in "$work/stage2/runs/baseline/seed_3/run.json" "\"init\": \"$work/seeds/runs/baseline/seed_3/checkpoints/step_"
expect_in "$work/stage2/results.json" "\"init_from\": \"$work/seeds\""
expect_in "$work/stage2/index.html" "<tr><td>Started from</td><td>the same variant and seed&#39;s last checkpoint in $work/seeds</td></tr></table></div>"
# It starts where the first stage ended: its first training loss is far below a fresh start's.
first_loss() { sed -n '1s/.*"loss":\([0-9.]*\),.*/\1/p' "$1"; }
awk -v a="$(first_loss "$work/stage2/runs/diff/seed_4/metrics.jsonl")" \
    -v b="$(first_loss "$work/seeds/runs/diff/seed_4/metrics.jsonl")" 'BEGIN { exit !(a + 0 < b - 0.5) }' ||
  { echo "FAIL: the second stage did not start from the first stage's weights"; exit 1; }
expect_error "has no checkpoint of baseline with seed 9" compare "$work/bad" --seeds 9 --init-from "$work/seeds"
expect_error "was not trained with seed 2" compare "$work/bad" --seed 2 --init-from "$work/report"

expect_error "--tokens N (training tokens per model) is required" "$difftx" experiment compare --preset mini
preset=nosuch expect_error "presets in $work/configs: mini" compare "$work/bad"
expect_error "no config $work/configs/mini/nosuch.json" compare "$work/bad" --variants baseline,nosuch
expect_error "a variant is named twice" compare "$work/bad" --variants diff,diff
expect_error "unknown target 'nosuch'" "$difftx" experiment nosuch

# --recipe niah: the retrieval preset, the recipe's mixture and step size (2048 tokens: 8 rows at
# --seq-len 256) and NIAH graded at the training context; a flag given still overrides.
"$difftx" experiment compare --recipe niah --variants baseline --tokens 4096 --seq-len 256 --data "$work/data" \
  --out "$work/recipe" --niah-samples 1 --mqar-samples 5 --attention-prompts 1 --outlier-tokens 256 --bits 0,4 \
  --quant-batches 1 --lr 3e-3 > "$work/recipe.txt"
expect_in "$work/recipe.txt" "compare: 1 models of preset retrieval, 2 steps of 2048 tokens each" \
  "2048 tokens/step (1 rank x 1 x 8 x 256)" "NIAH 50% of rows" "MQAR 20% of rows" "NIAH: mean accuracy" "over 6 cells"
expect_in "$work/recipe/results.json" '"lr": 0.003' '"warmup_steps": 50' '"context": 256' '"needles": 2'
expect_error "unknown --recipe 'nosuch' (known: niah)" "$difftx" experiment compare --recipe nosuch
echo "experiment compare: 3 models trained, analysed and reported; a second run resumed without training"
