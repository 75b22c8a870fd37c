# difftx analyze on a briefly trained DIFF model: attention allocation, outliers and quantization
# write the results-schema objects; 16-bit logits barely move the val loss while 4-bit logits
# move it measurably; the Table 6 ablation without the headwise norm trains and runs every
# analysis; bad input gets clear errors.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus

train() {  # train CONFIG OUT STEPS
  "$difftx" train --config "$1" --data "$work/data" --out "$2" --steps "$3" --seq-len 64 --micro-batch 16 \
    --lr 1e-2 --warmup 20 --eval-every 0 --eval-batches 4 --checkpoint-every 0 --quiet > /dev/null
  echo "$2/checkpoints/$(cat "$2/checkpoints/latest")"
}
val_loss() {  # val_loss JSON BITS: the val_loss of that bit width
  tr -d ' \n' < "$1" | grep -o "{\"bits\":$2,[^}]*}" | sed 's/.*"val_loss":\([-0-9.e+]*\).*/\1/'
}

model="$(train "$root/tests/fixtures/train/diff.json" "$work/diff" 300)"

# Figure 8: the loss at 16 bits is within 1e-4 of fp32's; at 4 bits it is higher, by at least
# 1e-5 (far above rounding: the 16-bit shift is 2e-7 to 7e-7) and 100 times the 16-bit shift. How much higher
# depends on the trained model, and the model depends on the build: step 1's loss agrees to 1e-9
# between the release (-O3) and asan (-O2, instrumented) builds, but rounding differences grow
# over 300 steps at lr 1e-2 into different models (val loss 5.07 vs 5.21). The analysis itself
# gives the same bits in both builds on one model. Measured: release +6.0e-3 (16 bits 7e-7),
# asan +2.4e-4 (16 bits 2e-7). The logits' rounding error grows as 2^-bits, so 12 bits fewer
# move the loss some 4096 times more (or the square of that): 100x leaves a wide margin for any
# trained model, and fails when --bits does not reach the kernel (one loss at every width).
"$difftx" analyze quant --model "$model" --data "$work/data" --bits 0,16,4 --seq-len 64 --max-batches 8 --quiet \
  --json "$work/quant.json" | tee "$work/quant.txt"
expect_in "$work/quant.json" '"quantization"'
fp32="$(val_loss "$work/quant.json" 0)"; q16="$(val_loss "$work/quant.json" 16)"; q4="$(val_loss "$work/quant.json" 4)"
awk -v a="$fp32" -v b="$q16" 'BEGIN { d = b - a; exit !(a > 0 && d < 1e-4 && d > -1e-4) }' ||
  { echo "FAIL: 16-bit loss $q16 is not within 1e-4 of the fp32 loss $fp32"; exit 1; }
awk -v a="$fp32" -v b="$q4" -v c="$q16" 'BEGIN { d16 = c - a; if (d16 < 0) d16 = -d16; exit !(b - a > 1e-5 && b - a > 100 * d16) }' ||
  { echo "FAIL: 4-bit loss $q4 is not measurably above the fp32 loss $fp32 (16 bits: $q16)"; exit 1; }

# Table 5 and Table 3 / Figure 1: the schema objects.
"$difftx" analyze outliers --model "$model" --data "$work/data" --tokens 1024 --seq-len 64 --quiet \
  --json "$work/outliers.json" > "$work/outliers.txt"
expect_in "$work/outliers.json" '"outliers"' '"attention_logits"' '"hidden_states"' '"top1"' '"top3"' '"median"' '"tokens": 1024'
expect_in "$work/outliers.txt" "attention logits" "hidden states"
"$difftx" analyze attention --model "$model" --data "$work/data" --context 96 --per-depth 2 --depths 0,0.5,1 \
  --json "$work/attention.json" > "$work/attention.txt"
expect_in "$work/attention.json" '"attention_allocation"' '"normalisation"' '"by_depth"' '"by_layer"' '"answer"' \
  '"noise"' '"attention_map"' '"tokens"' '"weights"' '"answer_span"' '"query_position"'
expect_in "$work/attention.txt" "depth" "100%" "layer"
cat "$work/attention.txt"

# Table 6: DIFF without the headwise norm trains and runs every analysis.
sed 's/"diff_subln": true/"diff_subln": false/' "$root/tests/fixtures/train/diff.json" > "$work/diff_nosubln.json"
ablation="$(train "$work/diff_nosubln.json" "$work/nosubln" 20)"
grep -q '"diff_subln": false' "$ablation/config.json" || { echo "FAIL: the ablation's checkpoint keeps the norm"; exit 1; }
"$difftx" analyze quant --model "$ablation" --data "$work/data" --bits 0,8 --seq-len 64 --max-batches 2 --quiet > /dev/null
"$difftx" analyze outliers --model "$ablation" --data "$work/data" --tokens 256 --seq-len 64 --quiet > /dev/null
"$difftx" analyze attention --model "$ablation" --data "$work/data" --context 64 --per-depth 1 > /dev/null

# Bad input.
expect_error "the model directory does not exist" "$difftx" analyze outliers --model "$work/nope" --data "$work/data"
expect_error "data directory does not exist" "$difftx" analyze outliers --model "$model" --data "$work/nope" --seq-len 64
expect_error "between 2 and 16, got 17" "$difftx" analyze quant --model "$model" --data "$work/data" --bits 0,17
expect_error "between 2 and 16, got 1" "$difftx" analyze quant --model "$model" --data "$work/data" --bits 1
expect_error "--bits expects a comma-separated list of integers, got '8,x'" "$difftx" analyze quant --model "$model" --data "$work/data" --bits 8,x
expect_error "context 12 is too short" "$difftx" analyze attention --model "$model" --data "$work/data" --context 12
expect_error "--depths expects a comma-separated list of numbers, got '2' (each must be a finite number in [0, 1])" "$difftx" analyze attention --model "$model" --data "$work/data" --depths 2
expect_error "--map-layer 5 outside [0, 2)" "$difftx" analyze attention --model "$model" --data "$work/data" --map-layer 5
expect_error "unknown target 'noise'" "$difftx" analyze noise --model "$model"
expect_error "unknown option --bitz" "$difftx" analyze quant --model "$model" --data "$work/data" --bitz 4
echo "PASS"
