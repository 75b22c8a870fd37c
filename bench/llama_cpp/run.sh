#!/usr/bin/env bash
# difftx against llama.cpp on the same weights (docs/BENCHMARKS.md "Against llama.cpp"): a
# random-weight model of CONFIG (default: the Llama 3.2 1B shape) with the Llama 3 tokenizer,
# converted per precision to a GGUF file for llama.cpp and to a difftx directory of the same
# bytes; both engines time a PROMPT-token prefill and NEW decode steps after it with the same
# threads, alternating, best of REPEATS. One line per precision, with the memory-bandwidth limit
# (weight bytes read per token / the copy rate `difftx bench memory` measures in the same run):
#   bench/llama_cpp/run.sh [--config FILE] [--dtypes f16,q8_0,q4_0] [--prompt 512] [--new 128]
#                          [--repeats 2] [--threads N] [--work DIR] [--json]
#                          [--difftx BIN] [--cpu-variant NAME] [--head-dtype TYPE]
# Installs the peer on first use (bench/llama_cpp/setup: npm node-llama-cpp into .cache/).
# --difftx: the binary to time (default build/release/difftx), e.g. an AVX2 build's.
# --cpu-variant: llama.cpp with one CPU library only. node-llama-cpp ships a libggml-cpu-NAME.so
# per x86-64 family and loads the best this CPU runs; a copy of the package in
# .cache/llama_cpp-NAME keeps NAME's alone, so that e.g. `--cpu-variant haswell` (AVX2 + FMA +
# F16C + BMI2) runs llama.cpp's AVX2 code on any newer CPU, the peer of an AVX2 difftx build.
# --head-dtype: the embedding and output matrix in TYPE in both engines' files (`convert
# --head-dtype`), e.g. q4_0 for llama.cpp's pure Q4_0 layout instead of the Q8_0 head.
set -euo pipefail
cd "$(dirname "$0")/../.."
config=configs/hf/llama-1b.json dtypes=f16,q8_0,q4_0 prompt=512 new=128 repeats=2 threads="$(nproc)"
work=.cache/bench-llama-cpp json=0 difftx=build/release/difftx variant= head=()
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config="$2"; shift 2 ;;
    --dtypes) dtypes="$2"; shift 2 ;;
    --prompt) prompt="$2"; shift 2 ;;
    --new) new="$2"; shift 2 ;;
    --repeats) repeats="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --json) json=1; shift ;;
    --difftx) difftx="$2"; shift 2 ;;
    --cpu-variant) variant="$2"; shift 2 ;;
    --head-dtype) head=(--head-dtype "$2"); shift 2 ;;
    *) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
[ -x "$difftx" ] || { echo "run.sh: build difftx first (scripts/build release)" >&2; exit 1; }
[ -d .cache/llama_cpp/node_modules/node-llama-cpp ] || bench/llama_cpp/setup
if [ -n "$variant" ]; then
  peer=".cache/llama_cpp-$variant"
  if [ ! -f "$peer/ready" ]; then  # the package without its GPU builds, one CPU library left
    installed=.cache/llama_cpp/node_modules
    [ -f "$installed/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-cpu-$variant.so" ] \
      || { echo "run.sh: node-llama-cpp has no CPU variant '$variant'" >&2; exit 1; }
    rm -rf "$peer" && mkdir -p "$peer/node_modules/@node-llama-cpp"
    for entry in "$installed"/*; do
      [ "$(basename "$entry")" = @node-llama-cpp ] || cp -a "$entry" "$peer/node_modules/"
    done
    cp -a "$installed/@node-llama-cpp/linux-x64" "$peer/node_modules/@node-llama-cpp/"
    find "$peer/node_modules/@node-llama-cpp/linux-x64/bins" -name 'libggml-cpu-*.so' \
      ! -name "libggml-cpu-$variant.so" -delete
    touch "$peer/ready"
  fi
  export DIFFTX_NODE_LLAMA_CPP="$PWD/$peer/node_modules/node-llama-cpp/dist/index.js"
fi
[ -f data/hf/llama3/tokenizer.json ] || { echo "run.sh: data/hf/llama3 is missing (scripts/fetch-data)" >&2; exit 1; }

src="$work/src-$(basename "$config" .json)"
if [ ! -f "$src/config.json" ]; then
  "$difftx" init --config "$config" --out "$src" --dtype bf16 > /dev/null
  cp data/hf/llama3/tokenizer.json data/hf/llama3/tokenizer_config.json "$src/"
fi
python3 -c "import random; random.seed(4); print(' '.join(str(random.randrange(128000)) for _ in range($prompt + $new)))" \
  > "$work/ids.txt"
copy_gbps="$("$difftx" bench memory --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["copy_gbps"])')"

for dtype in ${dtypes//,/ }; do
  name="$(basename "$config" .json)-$dtype${head[1]:+-head-${head[1]}}"
  gguf="$work/gguf-$name" dir="$work/difftx-$name"
  [ -f "$gguf/model.gguf" ] || "$difftx" convert --model "$src" --to gguf --dtype "$dtype" "${head[@]}" --out "$gguf" > /dev/null
  [ -f "$dir/config.json" ] || "$difftx" convert --model "$src" --dtype "$dtype" "${head[@]}" --out "$dir" > /dev/null
  : > "$work/runs.jsonl"
  for _ in $(seq "$repeats"); do
    OMP_NUM_THREADS="$threads" "$difftx" bench infer --model "$dir" --prompt "$prompt" --new "$new" --json \
      | grep '"infer_model"' >> "$work/runs.jsonl"
    node bench/llama_cpp/peer.mjs time --model "$gguf/model.gguf" --tokens "$work/ids.txt" --prompt "$prompt" \
      --decode "$new" --threads "$threads" >> "$work/runs.jsonl"
  done
  python3 - "$work/runs.jsonl" "$dtype" "$copy_gbps" "$json" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
ours = [r for r in rows if r.get("op") == "infer_model"]
theirs = [r for r in rows if r.get("engine") == "llama.cpp"]
best = lambda rs, key: max(r[key] for r in rs)
copy = float(sys.argv[3])
out = {"op": "infer_peer", "dtype": sys.argv[2], "threads": theirs[0]["threads"],
       "decode_ratio": round(best(ours, "decode_tok_s") / best(theirs, "decode_tok_s"), 3),
       "prefill_ratio": round(best(ours, "prefill_tok_s") / best(theirs, "prefill_tok_s"), 3),
       "difftx_decode_tok_s": best(ours, "decode_tok_s"), "llamacpp_decode_tok_s": round(best(theirs, "decode_tok_s"), 2),
       "difftx_prefill_tok_s": best(ours, "prefill_tok_s"), "llamacpp_prefill_tok_s": round(best(theirs, "prefill_tok_s"), 1),
       "weight_gb": ours[0]["weight_gb"], "copy_gbps": copy,
       "bandwidth_limit_tok_s": round(copy / ours[0]["weight_gb"], 2)}
if sys.argv[4] == "1":
    print(json.dumps(out))
else:
    print("  ".join("%s=%s" % kv for kv in out.items()))
PY
done
