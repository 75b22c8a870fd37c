# difftx experiment compare end to end on a tiny preset: every model is trained for the same
# tokens and analysed, results.json holds every object of the schema for each, the report is
# written; a second run with the same arguments trains nothing again (the runs resume at their
# last step) and writes the same training record; bad input gets clear errors.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus

mkdir -p "$work/configs/mini"
cp "$root"/tests/fixtures/train/{baseline,diff,diff2}.json "$work/configs/mini/"
compare() {  # compare OUT [extra options]
  local out="$1"; shift
  "$difftx" experiment compare --configs "$work/configs" --preset "${preset:-mini}" --tokens 16384 --data "$work/data" \
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

# Again with the same arguments: nothing is trained again and the training record is the same.
cp "$work/report/runs/diff/metrics.jsonl" "$work/diff_metrics.jsonl"
compare "$work/report" > "$work/second.txt"
expect_in "$work/second.txt" "resumed from $work/report/runs/diff/checkpoints/step_00000016 (step 16)"
if grep -q "^step " "$work/second.txt"; then echo "FAIL: the second compare trained again:"; grep "^step " "$work/second.txt"; exit 1; fi
cmp "$work/report/runs/diff/metrics.jsonl" "$work/diff_metrics.jsonl" || { echo "FAIL: metrics changed on the second run"; exit 1; }

expect_error "--tokens N (training tokens per model) is required" "$difftx" experiment compare --preset mini
preset=nosuch expect_error "presets in $work/configs: mini" compare "$work/bad"
expect_error "no config $work/configs/mini/nosuch.json" compare "$work/bad" --variants baseline,nosuch
expect_error "a variant is named twice" compare "$work/bad" --variants diff,diff
expect_error "unknown target 'nosuch'" "$difftx" experiment nosuch
echo "experiment compare: 3 models trained, analysed and reported; a second run resumed without training"
