#!/usr/bin/env bash
# difftx's engine against llama.cpp with many sequences at once (docs/BENCHMARKS.md "Many streams"):
# the same random-weight model as run.sh (default the Llama 3.2 1B shape) per precision, S
# streams of a PROMPT-token prompt and NEW greedy tokens each; difftx `bench serve` on one engine,
# llama.cpp with S sequences in one context (node-llama-cpp batches their tokens into one decode
# per step), same threads. One JSON line per (dtype, S) with both engines' rates and the ratios:
#   bench/llama_cpp/serve.sh [--config FILE] [--dtypes f16,q8_0,q4_0] [--concurrency 1,4,16]
#                            [--prompt 128] [--new 64] [--threads N] [--work DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
config=configs/hf/llama-1b.json dtypes=f16,q8_0,q4_0 concurrency=1,4,16 prompt=128 new=64 threads="$(nproc)"
work=.cache/bench-llama-cpp
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config="$2"; shift 2 ;;
    --dtypes) dtypes="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --prompt) prompt="$2"; shift 2 ;;
    --new) new="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "serve.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
difftx=build/release/difftx
mkdir -p "$work"
[ -x "$difftx" ] || { echo "serve.sh: build difftx first (scripts/build release)" >&2; exit 1; }
[ -d .cache/llama_cpp/node_modules/node-llama-cpp ] || bench/llama_cpp/setup

name="$(basename "$config" .json)" src="$work/src-$(basename "$config" .json)"
[ -f "$src/config.json" ] || "$difftx" init --config "$config" --out "$src" --dtype bf16 > /dev/null
python3 -c "import random; random.seed(5); print(' '.join(str(random.randrange(128000)) for _ in range(64 * $prompt)))" \
  > "$work/serve_ids.txt"
for dtype in ${dtypes//,/ }; do
  gguf="$work/gguf-$name-$dtype" dir="$work/difftx-$name-$dtype"
  [ -f "$gguf/model.gguf" ] || "$difftx" convert --model "$src" --to gguf --dtype "$dtype" --out "$gguf" > /dev/null
  [ -f "$dir/config.json" ] || "$difftx" convert --model "$src" --dtype "$dtype" --out "$dir" > /dev/null
  ours="$(OMP_NUM_THREADS="$threads" "$difftx" bench serve --model "$dir" --concurrency "$concurrency" \
            --prompt "$prompt" --new "$new" --json | grep '"serve_bench"')"
  for s in ${concurrency//,/ }; do
    theirs="$(node bench/llama_cpp/peer.mjs serve --model "$gguf/model.gguf" --tokens "$work/serve_ids.txt" \
                --prompt "$prompt" --decode "$new" --sequences "$s" --threads "$threads")"
    OURS="$ours" python3 - "$dtype" "$s" "$theirs" <<'PY'
import json, os, sys
dtype, s, theirs = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
ours = next(r for r in map(json.loads, os.environ["OURS"].splitlines()) if r["concurrency"] == s)
print(json.dumps({"op": "serve_peer", "dtype": dtype, "concurrency": s, "threads": theirs["threads"],
                  "decode_ratio": round(ours["decode_tok_s"] / theirs["decode_tok_s"], 3),
                  "aggregate_ratio": round(ours["aggregate_tok_s"] / theirs["aggregate_tok_s"], 3),
                  "difftx_decode_tok_s": ours["decode_tok_s"], "llamacpp_decode_tok_s": round(theirs["decode_tok_s"], 2),
                  "difftx_aggregate_tok_s": ours["aggregate_tok_s"],
                  "llamacpp_aggregate_tok_s": round(theirs["aggregate_tok_s"], 2),
                  "difftx_ttft_p50_s": ours["ttft_p50_s"], "llamacpp_ttft_p50_s": round(theirs["ttft_p50_s"], 4),
                  "difftx_itl_p50_s": ours["itl_p50_s"], "llamacpp_itl_p50_s": round(theirs["itl_p50_s"], 4)}))
PY
  done
done
