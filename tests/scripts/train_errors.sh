# Training's bad inputs get clear errors and lose no data.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus
config="$root/tests/fixtures/train/baseline.json"

expect_error "data directory does not exist" "$difftx" train --config "$config" --data "$work/nope" --out "$work/r0"
expect_error "unknown option --stpes" "$difftx" train --config "$config" --data "$work/data" --out "$work/r0" --stpes 3
expect_error "cannot open" "$difftx" train --config "$work/missing.json" --data "$work/data" --out "$work/r0"

# A diverging run stops at the first non-finite step and keeps its last good checkpoint.
expect_error "is not finite" "$difftx" train --config "$config" --data "$work/data" --out "$work/nan" --steps 20 \
  --seq-len 32 --micro-batch 2 --lr 1e30 --warmup 0 --grad-clip 0 --checkpoint-every 1 --quiet
last="$(cat "$work/nan/checkpoints/latest")"
echo "diverged; latest checkpoint $last"
"$difftx" logits --model "$work/nan/checkpoints/$last" --tokens "1 2 3" --out "$work/logits.npy" > /dev/null

# A run directory with checkpoints is not overwritten without --resume.
expect_error "already holds checkpoints" "$difftx" train --config "$config" --data "$work/data" --out "$work/nan" --steps 2

# A checkpoint whose config differs from the run's config.
expect_error "in the checkpoint but" "$difftx" train --config "$root/tests/fixtures/train/diff.json" \
  --data "$work/data" --out "$work/nan" --steps 30 --resume --quiet
echo "PASS"
