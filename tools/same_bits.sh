#!/usr/bin/env bash
# Same bits as another build: trains each config a few steps with both binaries (the losses), then
# converts the new run's checkpoint to every weight type and compares logits, eval, and generate
# (bf16 and int8 KV) byte for byte. DIFFTX_CPU picks the level both run at.
# Usage: tools/same_bits.sh NEW_DIFFTX OLD_DIFFTX [CONFIG.json ...]   (default: configs/tiny/*.json)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
NEW=$1; OLD=$2; shift 2
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
configs=("$@"); [ ${#configs[@]} -gt 0 ] || configs=("$root"/configs/tiny/*.json)
cat "$root"/data/moby-dick/chapter_*.txt | head -c 300000 > "$W/corpus.txt" || true
"$OLD" prepare --corpus "$W/corpus.txt" --out "$W/data" --vocab-size 300 --max-document-bytes 20000 > /dev/null
fail=0
for cfg in "${configs[@]}"; do
  name=$(basename "$cfg" .json)
  for t in new old; do B=$([ $t = new ] && echo "$NEW" || echo "$OLD")
    "$B" train --config "$cfg" --data "$W/data" --out "$W/run-$name-$t" --steps 6 --seq-len 32 --micro-batch 2 \
      --eval-every 3 --eval-batches 2 --checkpoint-every 6 --quiet > /dev/null 2>&1 || echo "train failed: $name $t"
    grep -o '"[a-z_]*loss":[^,}]*' "$W/run-$name-$t/metrics.jsonl" > "$W/run-$name-$t.loss" || true
  done
  cmp -s "$W/run-$name-new.loss" "$W/run-$name-old.loss" || { echo "DIFFER: $name training losses"; fail=1; }
  ck=$(ls -d "$W/run-$name-new/checkpoints/"*/ | tail -1)
  for dt in f32 bf16 f16 q8_0 q4_0 q4_k; do
    m="$W/m-$name-$dt"; "$NEW" convert --model "$ck" --out "$m" --dtype $dt > /dev/null
    for t in new old; do B=$([ $t = new ] && echo "$NEW" || echo "$OLD")
      "$B" logits --model "$m" --tokens "1 5 9 33 70 2 100 101 7" --out "$m.$t.npy" > /dev/null 2>&1
      "$B" generate --model "$m" --prompt "the whale" --max-new-tokens 24 --seed 5 > "$m.$t.gen" 2> /dev/null
      "$B" generate --model "$m" --prompt "the whale" --max-new-tokens 16 --kv-dtype int8 --temperature 0 \
        >> "$m.$t.gen" 2> /dev/null
      "$B" eval --model "$m" --data "$W/data" --seq-len 32 --micro-batch 2 --max-batches 3 --quiet 2> /dev/null |
        sed 's/ | [0-9.]* s$//' > "$m.$t.eval"  # the time is not a result
    done
    for what in npy gen eval; do cmp -s "$m.new.$what" "$m.old.$what" || { echo "DIFFER: $name $dt $what"; fail=1; }; done
  done
  echo "$name: compared"
done
[ $fail = 0 ] && echo "same bits" || { echo "bits differ"; exit 1; }
