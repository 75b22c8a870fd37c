# The draft options of generate, serve and the inference benches (--draft none|ngram|DIR,
# --draft-tokens K) on a random-weight model: none drafts nothing, --draft-tokens without a draft is an
# error naming it, a directory that does not load an error naming --draft and the directory; and a
# JSON-schema request with the model drafting for itself writes the document it writes without a
# draft, every draft accepted (drafts keep to the schema's mask), in generate and bench serve.
source "$(dirname "$0")/lib.bash"
# A random-weight DIFF model with the Motif fixture's tokenizer and room for a whole document.
cat > "$work/config.json" <<'JSON'
{"model_type": "difftx", "attention": "diff", "vocab_size": 288, "hidden_size": 64, "num_hidden_layers": 2,
 "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128,
 "max_position_embeddings": 1024, "rope_theta": 10000.0, "rope_style": "interleaved", "rms_norm_eps": 1e-05,
 "tie_word_embeddings": true, "lambda_init": "exp", "diff_subln": true}
JSON
model="$work/model"
"$difftx" init --config "$work/config.json" --out "$model" > /dev/null
cp "$root/tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer/tokenizer.json" "$model/"
gen() { "$difftx" generate --model "$model" --prompt "The Congress" --temperature 0 "$@"; }

gen --max-new-tokens 24 > "$work/plain.txt" 2> /dev/null
gen --max-new-tokens 24 --draft none > "$work/none.txt" 2> "$work/none.err"
cmp -s "$work/none.txt" "$work/plain.txt" || { echo "FAIL: --draft none changed the text"; exit 1; }
! grep -q "draft" "$work/none.err" || { echo "FAIL: --draft none drafted"; cat "$work/none.err"; exit 1; }

without="--draft-tokens 3 is given without a draft: set --draft to ngram or a model directory"
expect_error "$without" gen --draft-tokens 3
expect_error "$without" gen --draft none --draft-tokens 3
expect_error "$without" "$difftx" bench infer --model "$model" --prompt 8 --new 4 --draft-tokens 3
expect_error "$without" "$difftx" bench serve --model "$model" --concurrency 1 --prompt 8 --new 4 --draft-tokens 3
expect_error "$without" "$difftx" serve --model "$model" --port 0 --draft-tokens 3

mkdir "$work/empty" "$work/broken"
echo "{" > "$work/broken/config.json"
expect_error "--draft $work/empty: $work/empty: no config.json" gen --draft "$work/empty"
expect_error "--draft $work/broken: $work/broken/config.json: invalid JSON" gen --draft "$work/broken"
expect_error "--draft $work/nope: not none, ngram or a model directory" gen --draft "$work/nope"

cat > "$work/schema.json" <<'JSON'
{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 999},
 "ok": {"type": "boolean"}, "tag": {"enum": ["alpha", "beta"]}}, "required": ["n", "ok", "tag"],
 "additionalProperties": false}
JSON
doc() { gen --max-new-tokens 400 --json-schema "$work/schema.json" "$@"; }
doc > "$work/doc.txt" 2> /dev/null
python3 -c 'import json, sys; d = json.loads(open(sys.argv[1]).read()[len("The Congress"):]); assert set(d) == {"n", "ok", "tag"}' \
  "$work/doc.txt" || { echo "FAIL: the document"; cat "$work/doc.txt"; exit 1; }
for k in 4 64; do
  doc --draft "$model" --draft-tokens "$k" > "$work/doc_$k.txt" 2> "$work/doc_$k.err"
  cmp -s "$work/doc_$k.txt" "$work/doc.txt" || { echo "FAIL: K $k changed the document"; cat "$work/doc_$k.txt"; exit 1; }
  counts="$(sed -n 's/.*draft model: \([0-9]*\) of \([0-9]*\) drafted tokens accepted.*/\1 \2/p' "$work/doc_$k.err")"
  read -r accepted drafted <<< "$counts"
  [ -n "$drafted" ] && [ "$drafted" -gt 0 ] && [ "$accepted" = "$drafted" ] ||
    { echo "FAIL: K $k: the model drafting for itself under the schema: '$counts'"; cat "$work/doc_$k.err"; exit 1; }
done
# bench serve runs the constrained streams with the draft too: the model drafting for itself under
# the schema has every draft accepted.
"$difftx" bench serve --model "$model" --concurrency 1 --prompt 8 --new 40 --json-schema "$work/schema.json" \
  --tokenizer "$model" --pairs 1 --draft "$model" --json > "$work/bench.jsonl" 2> "$work/bench.err" ||
  { echo "FAIL: bench serve"; cat "$work/bench.err"; exit 1; }
python3 - "$work/bench.jsonl" <<'PY' || exit 1
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if '"serve_bench"' in line]
runs = [(r["constrained"], r["draft"]) for r in rows]
if runs != [(0, "none"), (0, "model"), (1, "none"), (1, "model")]:
    sys.exit(f"FAIL: bench serve's runs {runs}")
if not (rows[3]["draft_tokens"] > 0 and rows[3]["draft_acceptance"] == 1):
    sys.exit(f"FAIL: constrained drafts of the model drafting for itself: {rows[3]}")
PY
echo "PASS"
