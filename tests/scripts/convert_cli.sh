# difftx init and convert end to end: a random DIFF V1 model (interleaved RoPE, GQA) written as
# Hugging Face DiffLlama gives the same logits; init keeps the config's bos/eos ids; HF -> difftx
# -> HF keeps the weights' bytes; BF16 storage is written as such; block types (q8_0, q4_0) are
# written packed and every inference command runs them; refusals name what is wrong.
source "$(dirname "$0")/lib.bash"

cat > "$work/diff.json" <<'JSON'
{"model_type": "difftx", "attention": "diff", "vocab_size": 50, "hidden_size": 32, "num_hidden_layers": 2,
 "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 64,
 "max_position_embeddings": 32, "tie_word_embeddings": false}
JSON
"$difftx" init --config "$work/diff.json" --out "$work/difftx" --seed 3 > /dev/null
"$difftx" convert --model "$work/difftx" --to hf --out "$work/hf" > /dev/null
expect_in "$work/hf/config.json" '"model_type": "diffllama"' '"num_attention_heads": 4' '"num_key_value_heads": 2'
"$difftx" convert --model "$work/hf" --to difftx --out "$work/back" > /dev/null
"$difftx" convert --model "$work/back" --to hf --out "$work/hf2" > /dev/null
cmp "$work/hf/model.safetensors" "$work/hf2/model.safetensors" || { echo "FAIL: HF -> difftx -> HF changed bytes"; exit 1; }

# init keeps the config's token ids, as transformers' config classes write them (an eos list kept
# a list, pad_token_id only where set), in either format.
python3 - "$work/diff.json" "$work/ids.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(bos_token_id=1, eos_token_id=[2, 3], pad_token_id=None)
json.dump(c, open(sys.argv[2], "w"))
PY
for to in hf difftx; do
  "$difftx" init --config "$work/ids.json" --to "$to" --out "$work/ids_$to" > /dev/null
  python3 - "$work/ids_$to/config.json" <<'PY' || { echo "FAIL: init --to $to dropped the token ids"; cat "$work/ids_$to/config.json"; exit 1; }
import json, sys
c = json.load(open(sys.argv[1]))
assert c["bos_token_id"] == 1 and c["eos_token_id"] == [2, 3] and "pad_token_id" not in c, c
PY
done

# An odd num_key_value_heads (transformers' DiffLlama, 6 heads over 3): difftx reads kv rows into
# several groups, and HF -> difftx -> HF writes the checkpoint's own heads and tensors back, not
# 6 kv heads of copies.
odd="$root/tests/fixtures/hf/diffllama_kv3_odd_f32_untied"
"$difftx" convert --model "$odd" --out "$work/odd_difftx" > /dev/null
"$difftx" convert --model "$work/odd_difftx" --to hf --out "$work/odd_hf" > /dev/null
expect_in "$work/odd_hf/config.json" '"num_attention_heads": 6' '"num_key_value_heads": 3'
python3 - "$odd/model.safetensors" "$work/odd_hf/model.safetensors" <<'PY'
import json, struct, sys
def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    return {k: (v["dtype"], v["shape"], raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]])
            for k, v in header.items()}
want, got = tensors(sys.argv[1]), tensors(sys.argv[2])
assert want.keys() == got.keys(), sorted(set(want) ^ set(got))
for name in want:
    assert want[name] == got[name], "HF -> difftx -> HF changed " + name
PY

tokens="1 7 3 9 4 2 8 5 6 0 11 12"
"$difftx" logits --model "$work/difftx" --tokens "$tokens" --out "$work/a.npy" > /dev/null
"$difftx" logits --model "$work/hf" --tokens "$tokens" --out "$work/b.npy" > /dev/null
check_logits "$work/a.npy" "$work/b.npy" '
worst = max(abs(x - y) / (1e-3 + abs(x)) for x, y in zip(a, b))
assert len(a) == len(b) == 12 * 50, (len(a), len(b))
assert worst < 1e-4, worst'


"$difftx" convert --model "$work/hf" --to hf --dtype bf16 --out "$work/bf16" > /dev/null
expect_in "$work/bf16/config.json" '"torch_dtype": "bfloat16"'
expect_in "$work/bf16/model.safetensors" '"dtype":"BF16"'

# Packed matrices: U8 blocks with their type in the metadata; `logits` runs on them as stored,
# and they stay near the F32 model's (the int8 activations of the
# block kernels move them a little; a wrong matrix would move them by far more).
"$difftx" convert --model "$work/difftx" --dtype q8_0 --out "$work/q8" > /dev/null
expect_in "$work/q8/model.safetensors" '"dtype":"U8"' '"difftx.weight_type.model.layers.0.mlp.up_proj.weight":"q8_0"'
"$difftx" logits --model "$work/q8" --tokens "$tokens" --out "$work/q8.npy" > /dev/null
check_logits "$work/a.npy" "$work/q8.npy" '
scale = max(abs(x) for x in a)
worst = max(abs(x - y) for x, y in zip(a, b)) / scale
assert 0 < worst < 0.05, worst'

"$difftx" convert --model "$work/q8" --dtype q4_0 --out "$work/q4" > /dev/null  # widened, then requantized
expect_in "$work/q4/model.safetensors" '"difftx.weight_type.model.layers.1.self_attn.q_proj.weight":"q4_0"' \
  '"difftx.weight_type.lm_head.weight":"q8_0"'
expect_error "a Hugging Face directory holds f32, bf16 or f16 weights" \
  "$difftx" convert --model "$work/q8" --to hf --dtype q8_0 --out "$work/x"

expect_error "exists and is not an empty directory" "$difftx" convert --model "$work/hf" --out "$work/difftx"
expect_error "--dtype: 'q3' is not a storage type" "$difftx" convert --model "$work/hf" --dtype q3 --out "$work/x"
expect_error "--to: 'onnx' is not a format" "$difftx" convert --model "$work/hf" --to onnx --out "$work/x"
# A NaN met while streaming (after the output's header is written) fails the conversion and
# leaves neither a model file nor the --out directory it created.
cp -r "$work/difftx" "$work/nan"
python3 - "$work/nan/model.safetensors" <<'PY'
import json, struct, sys
f = open(sys.argv[1], "r+b"); n = struct.unpack("<Q", f.read(8))[0]; h = json.loads(f.read(n))
f.seek(8 + n + h["model.layers.1.mlp.up_proj.weight"]["data_offsets"][0] + 4 * 5); f.write(struct.pack("<f", float("nan")))
PY
for options in "--dtype q8_0" "--to hf --dtype bf16"; do
  # shellcheck disable=SC2086
  expect_error "tensor 'model.layers.1.mlp.up_proj.weight' holds a non-finite value (nan at element 5)" \
    "$difftx" convert --model "$work/nan" $options --out "$work/nan_out"
  [ ! -e "$work/nan_out" ] || { echo "FAIL: a failed conversion left $work/nan_out"; exit 1; }
done
sed -e 's/"attention": "diff"/"attention": "diff2"/' "$work/diff.json" > "$work/diff2.json"
expect_error "DIFF V2 (attention \"diff2\") has no Hugging Face model class" \
  "$difftx" init --config "$work/diff2.json" --to hf --out "$work/v2"
python3 - "$work/hf/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0}
json.dump(c, open(sys.argv[1], "w"))
PY
expect_error "RoPE scaling type 'yarn' is not supported" "$difftx" logits --model "$work/hf" --tokens "1 2" --out "$work/c.npy"
echo "convert_cli: ok"
