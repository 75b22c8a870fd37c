#!/usr/bin/env bash
# Validation loss of trained models with their matrices stored in each inference weight type
# (difftx convert --dtype; model/storage_plan.h), against the same model in F32, on the whole
# val split of one prepared dataset:
#   bench/weight_quality.sh --data DIR [--types bf16,q8_0,q4_0,q4_k] [--seq-len 256] MODEL_DIR...
# Prints one line per model and type: val loss and its change from F32 in nats.
set -euo pipefail
cd "$(dirname "$0")/.."
data="" types="bf16,q8_0,q4_0,q4_k" seq=256 models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="$2"; shift 2 ;;
    --types) types="$2"; shift 2 ;;
    --seq-len) seq="$2"; shift 2 ;;
    -*) echo "weight_quality.sh: unknown option '$1'" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[ -n "$data" ] && [ ${#models[@]} -gt 0 ] || { echo "usage: bench/weight_quality.sh --data DIR MODEL_DIR..." >&2; exit 2; }
difftx=build/release/difftx
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

val_loss() { "$difftx" eval --model "$1" --data "$data" --seq-len "$seq" --quiet | sed -n 's/.*val loss \([0-9.]*\).*/\1/p'; }

printf '%-40s %-6s %10s %10s\n' model type "val loss" "change"
for model in "${models[@]}"; do
  base="$(val_loss "$model")"
  printf '%-40s %-6s %10s %10s\n' "$model" f32 "$base" ""
  for type in ${types//,/ }; do
    rm -rf "$work/m"
    "$difftx" convert --model "$model" --dtype "$type" --out "$work/m" > /dev/null
    loss="$(val_loss "$work/m")"
    printf '%-40s %-6s %10s %+10.4f\n' "$model" "$type" "$loss" "$(python3 -c "print($loss - $base)")"
  done
done
