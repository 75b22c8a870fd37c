# `difftx convert` on a Phi-4-mini-flash (SambaY hybrid) directory with random weights, a tokenizer
# and a chat template beside it (tools/oracle/write_phi4flash_dir.py): to difftx's format at f32
# and q8_0, and back to Phi4Flash's. The round trip and the direct HF -> HF conversion give the
# original's tensors bit for bit and a config.json difftx reads back; the tokenizer files travel;
# `logits`, `eval`, `generate` and `chat` run on every output, the f32 ones with the original's
# logits bit for bit; --to gguf and a block type as HF are refused by name.
source "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c "import numpy" 2>/dev/null ||
  { echo "SKIP: python3-numpy is missing (run scripts/setup)"; exit 77; }
model="$work/hybrid"
/usr/bin/python3 "$root/tools/oracle/write_phi4flash_dir.py" "$model"

"$difftx" convert --model "$model" --out "$work/f32" > /dev/null
"$difftx" convert --model "$model" --dtype q8_0 --out "$work/q8" > /dev/null
"$difftx" convert --model "$work/f32" --to hf --out "$work/hf" > /dev/null
"$difftx" convert --model "$model" --to hf --out "$work/direct" > /dev/null
expect_in "$work/f32/config.json" '"model_type": "difftx"' '"hybrid": {'
expect_in "$work/hf/config.json" '"model_type": "phi4flash"' '"mamba_d_state": 8' '"num_key_value_heads": 4'
expect_in "$work/q8/model.safetensors" '"difftx.weight_type.model.layers.0.attn.in_proj.weight":"q8_0"'
python3 - "$work/q8/model.safetensors" <<'PY'  # the vectors stay F32
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
header.pop("__metadata__")
bad = [k for k, v in header.items() if len(v["shape"]) == 1 and v["dtype"] != "F32"]
assert not bad and header["model.layers.0.attn.A_log"]["dtype"] == "F32", bad
PY

# Every tensor of $1 in $2 under the same name, dtype, shape and bytes, and nothing else.
same_tensors() {
  python3 - "$1" "$2" <<'PY'
import json, struct, sys
def tensors(path):
    raw = open(path + "/model.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    return {k: (v["dtype"], v["shape"], raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]])
            for k, v in header.items()}
a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
assert a.keys() == b.keys(), sorted(a.keys() ^ b.keys())
bad = [k for k in a if a[k] != b[k]]
assert not bad, bad
PY
}
same_tensors "$model" "$work/hf" || { echo "FAIL: HF -> difftx -> HF changed tensors"; exit 1; }
same_tensors "$model" "$work/direct" || { echo "FAIL: HF -> HF changed tensors"; exit 1; }
for f in tokenizer.json tokenizer_config.json; do
  for dir in f32 q8 hf; do
    cmp -s "$model/$f" "$work/$dir/$f" || { echo "FAIL: $f did not travel to $dir"; exit 1; }
  done
done

tokens="1 7 3 9 4 2 8 5 6 0 11 12"
for dir in "$model" "$work/f32" "$work/hf" "$work/q8"; do
  "$difftx" logits --model "$dir" --tokens "$tokens" --out "$dir.npy" > /dev/null
done
cmp -s "$model.npy" "$work/f32.npy" || { echo "FAIL: the difftx directory's logits are not the original's"; exit 1; }
cmp -s "$model.npy" "$work/hf.npy" || { echo "FAIL: the round trip's logits differ from the original's"; exit 1; }
# q8_0 (int8 activations too) stays near: these random weights amplify rounding through the
# 8 layers (bf16 alone moves the logits by 0.05 of the largest, q8_0 by 0.29).
check_logits "$model.npy" "$work/q8.npy" '
worst = max(abs(x - y) for x, y in zip(a, b)) / max(abs(x) for x in a)
assert len(a) == len(b) and 0 < worst < 0.5, worst'

mkdir -p "$work/corpus"
cp "$root/README.md" "$root/docs/MODEL.md" "$root/docs/FORMATS.md" "$work/corpus/"
"$difftx" prepare --corpus "$work/corpus" --tokenizer "$model" --out "$work/data" --quiet > /dev/null
for dir in "$model" "$work/f32" "$work/hf" "$work/q8"; do
  "$difftx" eval --model "$dir" --data "$work/data" --seq-len 16 --max-batches 2 --quiet > "$dir.eval" 2>&1 ||
    { echo "FAIL: eval on $dir"; cat "$dir.eval"; exit 1; }
  grep "^val loss" "$dir.eval" | cut -d'|' -f1-3 > "$dir.loss"  # the loss, perplexity and tokens, not the time
  "$difftx" generate --model "$dir" --prompt "The Congress" --max-new-tokens 8 --temperature 0 \
    > "$dir.gen" 2> /dev/null ||
    { echo "FAIL: generate on $dir"; exit 1; }
  printf 'Hi\n' | "$difftx" chat --model "$dir" --max-new-tokens 4 --temperature 0 > /dev/null 2>&1 ||
    { echo "FAIL: chat on $dir"; exit 1; }
done
[ -s "$model.loss" ] || { echo "FAIL: eval printed no loss"; cat "$model.eval"; exit 1; }
cmp -s "$model.loss" "$work/f32.loss" || { echo "FAIL: eval differs on the difftx directory"; exit 1; }
cmp -s "$model.loss" "$work/hf.loss" || { echo "FAIL: eval differs after the round trip"; exit 1; }
cmp -s "$model.gen" "$work/f32.gen" || { echo "FAIL: generate differs on the difftx directory"; exit 1; }
cmp -s "$model.gen" "$work/hf.gen" || { echo "FAIL: generate differs after the round trip"; exit 1; }

expect_error "llama.cpp has no phi4flash architecture" "$difftx" convert --model "$model" --to gguf --out "$work/g"
[ ! -e "$work/g" ] || { echo "FAIL: the GGUF refusal left $work/g"; exit 1; }
expect_error "a Hugging Face directory holds f32, bf16 or f16 weights" \
  "$difftx" convert --model "$work/q8" --to hf --dtype q8_0 --out "$work/x"
echo "PASS"
