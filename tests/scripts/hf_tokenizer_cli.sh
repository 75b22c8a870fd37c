# Hugging Face tokenizer.json end to end: difftx tokenize on Llama 3's and Qwen 3's files (round
# trips, special tokens as transformers matches them), a model directory whose tokenizer is a
# tokenizer.json (prepare -> train -> generate, with generation_config.json's eos ids and
# defaults), and bad files with clear errors.
source "$(dirname "$0")/lib.bash"
for name in llama3 qwen3; do
  [ -f "$root/data/hf/$name/tokenizer.json" ] || { echo "SKIP: $root/data/hf/$name is missing (run scripts/setup)"; exit 77; }
done
fail() { echo "FAIL: $*"; exit 1; }

printf 'Hello, world! 你好 😀 <|begin_of_text|>   x\n\n' > "$work/text.txt"
for tok in "$root/data/hf/llama3/tokenizer.json" "$root/data/hf/qwen3"; do
  "$difftx" tokenize --tokenizer "$tok" < "$work/text.txt" > "$work/ids"
  "$difftx" tokenize --tokenizer "$tok" --decode < "$work/ids" > "$work/back.txt"
  cmp -s "$work/text.txt" "$work/back.txt" || fail "decode(encode(text)) != text with $tok"
done
printf 'Hello world' | "$difftx" tokenize --tokenizer "$root/data/hf/llama3" | grep -qx "9906 1917" || fail "Llama 3 ids of 'Hello world'"
printf 'x<|begin_of_text|>' | "$difftx" tokenize --tokenizer "$root/data/hf/llama3" | grep -qw 128000 \
  || fail "special token text not matched by default with a tokenizer.json"
printf 'x<|begin_of_text|>' | "$difftx" tokenize --tokenizer "$root/data/hf/llama3" --special-as-text | grep -qw 128000 \
  && fail "--special-as-text ignored"

# A model directory with a tokenizer.json: data prepared with Qwen 3's tokenizer, a tiny model.
mkdir -p "$work/corpus"
cp "$root"/data/sotu/190*.txt "$work/corpus/" 2>/dev/null || { echo "SKIP: $root/data/sotu is missing"; exit 77; }
"$difftx" prepare --corpus "$work/corpus" --tokenizer "$root/data/hf/qwen3/tokenizer.json" --out "$work/data" --quiet
[ -f "$work/data/tokenizer.json" ] || fail "prepare did not write tokenizer.json"
sed 's/"vocab_size": [0-9]*/"vocab_size": 151669/' "$root/tests/fixtures/train/diff2.json" > "$work/model.json"
"$difftx" train --config "$work/model.json" --data "$work/data" --out "$work/run" --steps 2 --seq-len 32 \
  --micro-batch 2 --warmup 1 --eval-every 0 --checkpoint-every 0 --quiet > /dev/null
model="$work/run/checkpoints/step_00000002"
[ -f "$model/tokenizer.json" ] || fail "the checkpoint has no tokenizer.json"
gen() { "$difftx" generate --model "$model" --prompt "The Congress" "$@"; }
printf '{"max_new_tokens": 5, "do_sample": false}' > "$model/generation_config.json"
gen --seed 3 > "$work/a.txt" 2> "$work/a.err"
grep -q "decode: [0-5] tokens" "$work/a.err" || fail "generation_config.json's max_new_tokens ignored: $(cat "$work/a.err")"
gen --seed 4 > "$work/b.txt"
cmp -s "$work/a.txt" "$work/b.txt" || fail "do_sample false is not greedy"
gen --max-new-tokens 9 --temperature 1 2> "$work/c.err" > /dev/null
grep -q "decode: [0-9] tokens" "$work/c.err" || fail "--max-new-tokens did not override: $(cat "$work/c.err")"
# Every id an eos id: generation stops at the first token drawn.
python3 -c "import json; print(json.dumps({'eos_token_id': list(range(151669))}))" > "$model/generation_config.json"
gen 2> "$work/d.err" > /dev/null
grep -q "stopped at end of text" "$work/d.err" || fail "eos_token_id list ignored: $(cat "$work/d.err")"
printf '{"eos_token_id": [5, 99999999]}' > "$model/generation_config.json"
expect_error "eos_token_id" gen

# Bad files.
printf '{"model": {"type": "Unigram"}, "pre_tokenizer": null}' > "$work/bad.json"
expect_error "pre_tokenizer: missing" "$difftx" tokenize --tokenizer "$work/bad.json"
printf '{"version": "1.0", "pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "Unigram"}}' > "$work/bad.json"
expect_error "model type \"Unigram\" is not supported" "$difftx" tokenize --tokenizer "$work/bad.json"
head -c 1000 "$root/data/hf/llama3/tokenizer.json" > "$work/cut.json"
expect_error "cut.json: invalid JSON: parse error" "$difftx" tokenize --tokenizer "$work/cut.json"
deep() {  # deep N: pre-tokenizer Sequences nested N deep (2 JSON levels each)
  python3 -c "n = $1; print('{\"pre_tokenizer\": ' + '{\"type\": \"Sequence\", \"pretokenizers\": [' * n + '{}' + ']}' * n + '}')"
}
deep 100 > "$work/deep.json"  # parses (201 levels), then too deep for the pre-tokenizer readers
expect_error "nested deeper than 64 levels" "$difftx" tokenize --tokenizer "$work/deep.json"
deep 200000 > "$work/deep.json"  # refused while parsing, as every JSON input
expect_error "deep.json: JSON nested deeper than 256 levels" "$difftx" tokenize --tokenizer "$work/deep.json"
echo "PASS"
