# difftx and llama.cpp on the very same weights: a baseline trained briefly with the Llama 3
# tokenizer, written as GGUF (difftx convert --to gguf) and as a difftx directory of the same
# precision. The engines tokenize the same text into the same ids, agree on the greedy
# continuation token for token (F32), and give the same next-token log-probabilities (F32 and
# F16 weights) within what llama.cpp's own roundings allow: its KV cache holds F16 keys and
# values, and with F16 weights it rounds the activations to F16 too; difftx keeps both in F32.
# Skipped unless bench/llama_cpp/setup has installed node-llama-cpp (not part of CI).
source "$(dirname "$0")/lib.bash"
peer="$root/bench/llama_cpp/peer.mjs"
if [ ! -d "$root/.cache/llama_cpp/node_modules/node-llama-cpp" ] || ! command -v node > /dev/null; then
  echo "llama_cpp_peer: skipped: node-llama-cpp is not installed (bench/llama_cpp/setup)"
  exit 77
fi
if ! ls "$root"/data/sotu/19[0-4]*.txt > /dev/null 2>&1 || [ ! -f "$root/data/hf/llama3/tokenizer.json" ]; then
  echo "llama_cpp_peer: skipped: data/sotu or data/hf/llama3 is missing (scripts/fetch-data)"
  exit 77
fi

mkdir -p "$work/corpus" "$work/llama3"
cp "$root"/data/sotu/19[0-4]*.txt "$work/corpus/"
cp "$root"/data/hf/llama3/tokenizer.json "$root"/data/hf/llama3/tokenizer_config.json "$work/llama3/"
"$difftx" prepare --corpus "$work/corpus" --tokenizer "$work/llama3/tokenizer.json" --out "$work/data" --quiet
cat > "$work/config.json" <<'JSON'
{"model_type": "difftx", "attention": "baseline", "vocab_size": 128256, "hidden_size": 64, "num_hidden_layers": 2,
 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128,
 "max_position_embeddings": 128, "tie_word_embeddings": false, "rope_style": "half", "rope_theta": 500000.0,
 "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 32}}
JSON
"$difftx" train --config "$work/config.json" --data "$work/data" --steps 250 --warmup 10 --lr 1e-2 --seq-len 64 \
  --micro-batch 8 --eval-every 0 --checkpoint-every 0 --out "$work/run" --quiet > /dev/null
model="$work/run/checkpoints/$(cat "$work/run/checkpoints/latest")"
cp "$work/llama3/tokenizer.json" "$work/llama3/tokenizer_config.json" "$model/"
for dtype in f32 f16; do
  "$difftx" convert --model "$model" --to gguf --dtype "$dtype" --out "$work/gguf_$dtype" > /dev/null
  "$difftx" convert --model "$model" --dtype "$dtype" --out "$work/difftx_$dtype" > /dev/null
done

printf 'The Congress of the United States has the power to' > "$work/text.txt"
"$difftx" tokenize --tokenizer "$work/llama3/tokenizer.json" < "$work/text.txt" > "$work/ids_difftx.txt"
node "$peer" tokenize --model "$work/gguf_f32/model.gguf" --text "$work/text.txt" > "$work/ids_llama.json"
# The prompt: BOS then the text.
echo "128000 $(cat "$work/ids_difftx.txt")" > "$work/prompt.txt"
node "$peer" greedy --model "$work/gguf_f32/model.gguf" --tokens "$work/prompt.txt" --decode 12 > "$work/greedy.json"
continuation="$(python3 -c 'import json,sys; print(" ".join(map(str, json.load(open(sys.argv[1]))["tokens"])))' "$work/greedy.json")"
"$difftx" logits --model "$work/difftx_f32" --tokens "$(cat "$work/prompt.txt") $continuation" --out "$work/f32.npy" > /dev/null
for dtype in f32 f16; do
  node "$peer" probs --model "$work/gguf_$dtype/model.gguf" --tokens "$work/prompt.txt" > "$work/probs_$dtype.json"
  "$difftx" logits --model "$work/difftx_$dtype" --tokens "$(cat "$work/prompt.txt")" --out "$work/prompt_$dtype.npy" > /dev/null
done

python3 - "$work" <<'PY'
import json, math, struct, sys
work = sys.argv[1]
V = 128256
def logits(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<H", raw[8:10])[0]
    x = struct.unpack("<%df" % ((len(raw) - 10 - n) // 4), raw[10 + n:])
    return [x[i:i + V] for i in range(0, len(x), V)]
def log_softmax(row):
    m = max(row); z = math.log(sum(math.exp(v - m) for v in row))
    return [v - m - z for v in row]

ours = [int(t) for t in open(work + "/ids_difftx.txt").read().split()]
theirs = json.load(open(work + "/ids_llama.json"))["tokens"]
assert ours == theirs, ("tokenization differs", ours, theirs)

prompt = [int(t) for t in open(work + "/prompt.txt").read().split()]
greedy = json.load(open(work + "/greedy.json"))["tokens"]
rows = logits(work + "/f32.npy")
assert len(greedy) == 12 and len(set(greedy)) > 1, greedy   # a continuation, not one repeated id
for k, token in enumerate(greedy):
    row = rows[len(prompt) - 1 + k]
    assert max(range(V), key=row.__getitem__) == token, ("greedy differs at step", k, token)

# Log-probabilities of every token llama.cpp gives at least 1e-4, after the prompt.
for dtype, tolerance in (("f32", 1e-2), ("f16", 3e-2)):
    ref = log_softmax(logits(work + "/prompt_%s.npy" % dtype)[-1])
    probs = json.load(open(work + "/probs_%s.json" % dtype))["probabilities"]
    worst = max(abs(math.log(p) - ref[i]) for i, p in probs if p >= 1e-4)
    print("llama_cpp_peer: %s max |log p difference| %.2g over %d tokens" % (dtype, worst, sum(p >= 1e-4 for _, p in probs)))
    assert worst < tolerance, (dtype, worst)
PY
expect_error "llama.cpp has no architecture for diff attention" \
  "$difftx" convert --model "$root/tests/fixtures/oracle/diff" --to gguf --out "$work/x"
echo "llama_cpp_peer: ok"
