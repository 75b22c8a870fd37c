# difftx generate and difftx eval on a briefly trained checkpoint: a fixed seed reproduces the
# text, greedy is deterministic and the same with a draft (speculative decoding), --logit-bias
# steers the tokens (generate and chat), the rates go to stderr, eval agrees with the trainer's own
# validation loss on the same windows, and bad input gets clear errors.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus
"$difftx" train --config "$root/tests/fixtures/train/diff2.json" --data "$work/data" --out "$work/run" \
  --steps 30 --seq-len 64 --micro-batch 8 --lr 1e-2 --warmup 5 --eval-every 0 --eval-batches 4 \
  --checkpoint-every 0 --quiet > "$work/train.txt"
model="$work/run/checkpoints/step_00000030"

gen() { "$difftx" generate --model "$model" --prompt "The Congress" --max-new-tokens 40 "$@"; }
gen --seed 7 --temperature 1.0 --top-k 50 --top-p 0.95 > "$work/a.txt" 2> "$work/a.err"
gen --seed 7 --temperature 1.0 --top-k 50 --top-p 0.95 > "$work/b.txt" 2> /dev/null
gen --seed 8 --temperature 1.0 --top-k 50 --top-p 0.95 > "$work/c.txt" 2> /dev/null
cmp -s "$work/a.txt" "$work/b.txt" || { echo "FAIL: the same seed gave different text"; diff "$work/a.txt" "$work/b.txt"; exit 1; }
cmp -s "$work/a.txt" "$work/c.txt" && { echo "FAIL: seeds 7 and 8 gave the same text"; exit 1; }
grep -q "^The Congress" "$work/a.txt" || { echo "FAIL: stdout does not start with the prompt"; cat "$work/a.txt"; exit 1; }
grep -q "decode: .* tok/s" "$work/a.err" || { echo "FAIL: no decode rate on stderr"; cat "$work/a.err"; exit 1; }
grep -q "tok/s" "$work/a.txt" && { echo "FAIL: rates leaked into stdout"; exit 1; }
gen --temperature 0 --seed 1 > "$work/g1.txt" 2> /dev/null
gen --temperature 0 --seed 2 > "$work/g2.txt" 2> /dev/null
cmp -s "$work/g1.txt" "$work/g2.txt" || { echo "FAIL: greedy decoding depends on the seed"; exit 1; }
# Every KV cache storage generates; an INT8 cache is deterministic too.
for kv in f32 int8; do
  gen --temperature 0 --kv-dtype $kv > "$work/kv_$kv.txt" 2> /dev/null
  grep -q "^The Congress" "$work/kv_$kv.txt" || { echo "FAIL: --kv-dtype $kv"; cat "$work/kv_$kv.txt"; exit 1; }
done
gen --temperature 0 --kv-dtype int8 2> /dev/null | cmp -s - "$work/kv_int8.txt" || { echo "FAIL: an int8 cache is not deterministic"; exit 1; }
expect_error "expected f32, bf16 or int8" gen --kv-dtype fp8
# Speculative decoding gives the same greedy text, by prompt lookup and with the model drafting for
# itself; a draft that is no model, or whose vocabulary differs, is an error.
gen --temperature 0 --draft ngram > "$work/ngram.txt" 2> "$work/ngram.err"
cmp -s "$work/ngram.txt" "$work/g1.txt" || { echo "FAIL: --draft ngram changed the greedy text"; exit 1; }
grep -q "draft ngram: .* drafted tokens accepted" "$work/ngram.err" || { echo "FAIL: no acceptance"; cat "$work/ngram.err"; exit 1; }
gen --temperature 0 --draft "$model" --draft-tokens 3 2> /dev/null | cmp -s - "$work/g1.txt" ||
  { echo "FAIL: --draft DIR changed the greedy text"; exit 1; }
expect_error "--draft $work/nope: not none, ngram or a model directory" gen --draft "$work/nope"
expect_error "--draft-tokens" gen --draft ngram --draft-tokens 0
cp -r "$model" "$work/swapped"  # the same model, its last two tokens' ranks swapped
n="$(wc -l < "$model/tokenizer.tiktoken")"
awk -v n="$n" 'NR == n - 1 { a = $1; r = $2; next } NR == n { print $1 " " r; print a " " $2; next } { print }' \
  "$model/tokenizer.tiktoken" > "$work/swapped/tokenizer.tiktoken"
expect_error "differs from the target's: the draft must share the target's vocabulary" gen --draft "$work/swapped"
# --logit-bias: +100 on a token makes it every greedy token (in generate and chat), -100 on the greedy
# first token makes the first another; an id outside the vocabulary is an error naming the flag.
forced="$(echo 65 65 65 65 | "$difftx" tokenize --tokenizer "$model" --decode)"
"$difftx" generate --model "$model" --prompt "The Congress" --max-new-tokens 4 --temperature 0 \
  --logit-bias 65=100,66=-2.5 > "$work/bias.txt" 2> /dev/null
[ "$(< "$work/bias.txt")" = "The Congress$forced" ] || { echo "FAIL: --logit-bias 65=100"; cat "$work/bias.txt"; exit 1; }
printf '{%% for m in messages %%}<{{ m.content }}>{%% endfor %%}' > "$work/chat.jinja"
echo hi | "$difftx" chat --model "$model" --chat-template "$work/chat.jinja" --max-new-tokens 4 --temperature 0 \
  --logit-bias 65=100 > "$work/chat_bias.txt" 2> /dev/null
[ "$(< "$work/chat_bias.txt")" = "$forced" ] || { echo "FAIL: chat --logit-bias 65=100"; cat "$work/chat_bias.txt"; exit 1; }
first="$("$difftx" generate --model "$model" --prompt "The Congress" --max-new-tokens 1 --temperature 0 2> /dev/null)"
first_id="$(printf '%s' "${first#The Congress}" | "$difftx" tokenize --tokenizer "$model")"
[ "$(wc -w <<< "$first_id")" = 1 ] || { echo "FAIL: the first token '${first#The Congress}' encodes as '$first_id'"; exit 1; }
banned="$("$difftx" generate --model "$model" --prompt "The Congress" --max-new-tokens 1 --temperature 0 \
  --logit-bias "$first_id=-100" 2> /dev/null)"
[ "$banned" != "$first" ] || { echo "FAIL: --logit-bias $first_id=-100 left '$first'"; exit 1; }
expect_error "--logit-bias: token 512 is outside the vocabulary [0, 512)" gen --logit-bias 512=1
expect_error "--logit-bias: token 7 is given twice" gen --logit-bias 7=1,8=2,7=-1
echo "generated: $(head -c 200 "$work/a.txt")"

# eval over the trainer's validation windows (4 batches of 8 x 64) gives the trainer's val loss.
train_val="$(sed -n 's/.*val loss \([0-9.]*\),.*/\1/p' "$work/train.txt")"
"$difftx" eval --model "$model" --data "$work/data" --seq-len 64 --micro-batch 8 --max-batches 4 \
  > "$work/eval.txt" 2> "$work/eval.err"
eval_val="$(sed -n 's/^val loss \([0-9.]*\) .*/\1/p' "$work/eval.txt")"
[ -n "$eval_val" ] && [ "$eval_val" = "$train_val" ] || { echo "FAIL: eval loss '$eval_val' vs train val loss '$train_val'"; cat "$work/eval.txt"; exit 1; }
grep -q "eval batch 4/4" "$work/eval.err" || { echo "FAIL: no progress line"; cat "$work/eval.err"; exit 1; }
grep -q "perplexity" "$work/eval.txt" || { echo "FAIL: no perplexity"; exit 1; }

# Bad input.
long_prompt="$(printf 'word %.0s' $(seq 1 40))"
expect_error "longer than the context of 16 tokens" "$difftx" generate --model "$model" --prompt "$long_prompt" --context 16
expect_error "the model directory does not exist" "$difftx" generate --model "$work/nope" --prompt "x"
expect_error "$model/config.json: the model directory must be a directory, and this is a file" \
  "$difftx" generate --model "$model/config.json" --prompt "x"
mkdir -p "$work/bare"
cp "$model/config.json" "$model/model.safetensors" "$work/bare/"
expect_error "no tokenizer in the model directory" "$difftx" generate --model "$work/bare" --prompt "x"
if [ -f "$root/data/tokenizers/cl100k_base.tiktoken" ]; then
  expect_error "does not belong to this model" "$difftx" generate --model "$model" --prompt "x" --tokenizer cl100k_base
fi
expect_error "--top-p" "$difftx" generate --model "$model" --prompt "x" --top-p 0
# --stop ends the text before the stop string; a document it could cut is refused.
# (python/tests/test_generate.py compares the text with Python's stop= on the same cut.)
gen --temperature 0 > "$work/full.txt" 2> /dev/null
third="$(python3 -c 'import sys
reply = open(sys.argv[1], encoding="utf-8").read()[len("The Congress"):]
print(next(c for c in reply[2:] if not c.isspace()))' "$work/full.txt")"
gen --temperature 0 --stop "$third" > "$work/stopped.txt" 2> "$work/stopped.err"
python3 - "$work/full.txt" "$work/stopped.txt" "$third" <<'PY' || { echo "FAIL: --stop '$third'"; cat "$work/stopped.txt"; exit 1; }
import sys
full, got, stop = open(sys.argv[1], encoding="utf-8").read(), open(sys.argv[2], encoding="utf-8").read(), sys.argv[3]
reply = full[len("The Congress"):]
assert got == "The Congress" + reply[:reply.index(stop)] + "\n", (got, reply, stop)
PY
grep -q "stopped at end of text or --stop" "$work/stopped.err" || { echo "FAIL: no stop on stderr"; exit 1; }
echo '{"type": "boolean"}' > "$work/bool.json"
expect_error "--stop cannot be given with --json-schema" gen --stop x --json-schema "$work/bool.json"
expect_error "--stop needs a non-empty text" gen --stop ""
expect_error "data directory does not exist" "$difftx" eval --model "$model" --data "$work/nope"
echo "PASS"
