# The paper's analyses on a Hugging Face checkpoint: a DiffLlama directory (random weights, the
# Llama 3 vocabulary and tokenizer.json) loads through the DiffLlama adapter, and eval, generate
# and analyze outliers|attention|quant run on it with data prepared by its own tokenizer.
source "$(dirname "$0")/lib.bash"
tokenizer="$root/data/hf/llama3/tokenizer.json"
[ -f "$tokenizer" ] || { echo "SKIP: $tokenizer is missing (run scripts/setup)"; exit 77; }
ls "$root"/data/sotu/190*.txt > /dev/null 2>&1 || { echo "SKIP: $root/data/sotu is missing"; exit 77; }

python3 - "$root/configs/hf/diffllama-1b.json" "$work/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))  # the 1.2B DiffLlama's keys and vocabulary, at a tiny width
c.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
         head_dim=16)
json.dump(c, open(sys.argv[2], "w"))
PY
"$difftx" init --config "$work/config.json" --to hf --out "$work/model" > /dev/null
cp "$tokenizer" "$work/model/"
expect_in "$work/model/config.json" '"model_type": "diffllama"'
mkdir -p "$work/corpus" && cp "$root"/data/sotu/190*.txt "$work/corpus/"
"$difftx" prepare --corpus "$work/corpus" --tokenizer "$work/model/tokenizer.json" --out "$work/data" --quiet > /dev/null

"$difftx" eval --model "$work/model" --data "$work/data" --max-batches 2 > "$work/eval.txt" 2>&1
expect_in "$work/eval.txt" "val loss"
"$difftx" generate --model "$work/model" --prompt "The state of the Union" --max-new-tokens 4 --seed 1 > "$work/gen.txt" 2>&1
expect_in "$work/gen.txt" "decode:"
"$difftx" analyze outliers --model "$work/model" --data "$work/data" --tokens 512 --seq-len 64 --micro-batch 2 \
  --json "$work/outliers.json" > /dev/null
expect_in "$work/outliers.json" '"outliers"'
"$difftx" analyze attention --model "$work/model" --data "$work/data" --context 128 --needles 1 --depths 0.5 \
  --per-depth 1 --json "$work/attention.json" > /dev/null
expect_in "$work/attention.json" '"attention_allocation"'
"$difftx" analyze quant --model "$work/model" --data "$work/data" --bits 0,8,4 --seq-len 64 --micro-batch 2 \
  --max-batches 2 --json "$work/quant.json" --quiet > /dev/null
expect_in "$work/quant.json" '"quantization"'
echo "hf_model_analyses: ok"
