# `difftx convert` streams tensor by tensor (docs/FORMATS.md "Streaming conversion") and writes
# the very bytes the in-memory conversion it replaced wrote: every output file of ~200
# conversions (HF fixtures single and sharded, F32/BF16/F16; oracle fixtures of every attention
# kind; packed difftx sources; to difftx in every --dtype, HF, and GGUF in every dtype) has the
# SHA-256 that the pre-streaming binary (commit dbffc08) gave, recorded in
# convert_streaming.sha256 beside this script (but for the DiffLlama fixtures with an odd
# num_key_value_heads written --to hf, which now keep the checkpoint's kv heads: docs/FORMATS.md).
# A conversion that fails records its failure.
# Regenerate (only when a format change is intended): UPDATE=1 bash convert_streaming.sh DIFFTX REPO
source "$(dirname "$0")/lib.bash"
expected="$root/tests/scripts/convert_streaming.sha256"
sums="$work/sums"
: > "$sums"

# Converts $1 (a directory) with the options after $2 (a label); records every file's hash.
convert_case() {
  local src="$1" label="$2"; shift 2
  local out="$work/out/$label"
  if "$difftx" convert --model "$src" "$@" --out "$out" > /dev/null 2> "$work/err"; then
    (cd "$out" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | while read -r sum f; do
      echo "$label/${f#./} $sum"; done >> "$sums"
  else
    echo "$label error" >> "$sums"
  fi
  rm -rf "$out"
}

# Every output of one source.
convert_all() {  # convert_all DIR NAME gguf|nogguf
  local src="$1" name="$2"
  for dtype in f32 bf16 f16 q8_0 q4_0 q4_k; do convert_case "$src" "$name/difftx_$dtype" --dtype "$dtype"; done
  convert_case "$src" "$name/difftx_q4_0_head_f16" --dtype q4_0 --head-dtype f16
  for dtype in f32 bf16 f16; do convert_case "$src" "$name/hf_$dtype" --to hf --dtype "$dtype"; done
  if [ "$3" = gguf ]; then
    for dtype in f32 bf16 f16 q8_0 q4_0 q4_k; do convert_case "$src" "$name/gguf_$dtype" --to gguf --dtype "$dtype"; done
  fi
}

mkdir -p "$work/out" "$work/corpus"
for name in llama_mha_f32 llama_gqa4_f16_llama3_sharded llama_gqa2_bf16_untied_linear_sharded diffllama_mha_f32 \
            diffllama_gqa4_bf16_llama3 diffllama_gqa2_bf16_untied_linear_sharded diffllama_kv1_f16_sharded \
            diffllama_kv3_odd_f32_untied; do
  convert_all "$root/tests/fixtures/hf/$name" "hf_$name" nogguf
done
for name in baseline baseline_gqa2_untied diff diff_gqa2 diff2 diff2_gqa2_half_rope diff_ablation; do
  convert_all "$root/tests/fixtures/oracle/$name" "oracle_$name" nogguf
done

# Baselines wide enough for Q4_K's 256-weight blocks, with a trained tokenizer so that GGUF can
# carry it: rotate-half RoPE with Llama 3 scaling (rope_freqs, q/k rows permuted) and
# interleaved; stored BF16, and a Q8_0-packed copy as a source.
for i in 1 2 3 4 5 6; do
  printf 'Document %s. Call me Ishmael; the whale, the whale! 1234 %s\n' "$i" "$(printf 'x%.0s' $(seq 1 $i))" \
    > "$work/corpus/doc$i.txt"
done
"$difftx" prepare --corpus "$work/corpus" --vocab-size 300 --out "$work/ds" --quiet > /dev/null
cat > "$work/half.json" <<'JSON'
{"model_type": "difftx", "attention": "baseline", "vocab_size": 320, "hidden_size": 256, "num_hidden_layers": 2,
 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
 "max_position_embeddings": 128, "tie_word_embeddings": false, "rope_style": "half", "rope_theta": 500000.0,
 "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 32}}
JSON
sed -e 's/"rope_style": "half"/"rope_style": "interleaved"/' -e 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
  "$work/half.json" > "$work/interleaved.json"
for shape in half interleaved; do
  "$difftx" init --config "$work/$shape.json" --out "$work/$shape" --dtype bf16 --seed 11 > /dev/null
  cp "$work/ds/tokenizer.tiktoken" "$work/ds/tokenizer.tiktoken.json" "$work/$shape/"
  convert_all "$work/$shape" "init_$shape" gguf
done
"$difftx" convert --model "$work/half" --dtype q8_0 --out "$work/half_q8" > /dev/null
convert_all "$work/half_q8" init_half_q8_0 gguf

if [ "${UPDATE:-}" = 1 ]; then
  cp "$sums" "$expected"
  echo "convert_streaming: wrote $expected ($(wc -l < "$sums") files)"
  exit 0
fi
diff "$expected" "$sums" > "$work/diff" || { echo "FAIL: outputs differ from $expected:"; head -40 "$work/diff"; exit 1; }
echo "convert_streaming: ok ($(wc -l < "$sums") files identical)"
