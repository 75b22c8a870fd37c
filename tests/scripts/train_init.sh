# train --init: a run that starts from a model directory's weights. With a learning rate far too
# small to move a float32 weight, its checkpoint gives the very logits of the model it started
# from (at another --seq-len: the second stage of a context curriculum); a model of another
# shape, or none, is an error naming it.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus
"$difftx" train --config "$root/tests/fixtures/train/diff.json" --data "$work/data" --out "$work/stage1" \
  --steps 40 --seq-len 32 --micro-batch 8 --lr 5e-3 --warmup 5 --eval-every 0 --checkpoint-every 0 --quiet
init="$work/stage1/checkpoints/$(cat "$work/stage1/checkpoints/latest")"

"$difftx" train --init "$init" --data "$work/data" --out "$work/stage2" --steps 1 --seq-len 64 --micro-batch 2 \
  --lr 1e-30 --warmup 0 --eval-every 0 > "$work/stage2.txt"
expect_in "$work/stage2.txt" "starting from the weights of $init"
expect_in "$work/stage2/run.json" "\"init\": \"$init\""
stage2="$work/stage2/checkpoints/$(cat "$work/stage2/checkpoints/latest")"
"$difftx" logits --model "$init" --tokens "1 2 3 4 5 6 7" --out "$work/init.npy" > /dev/null
"$difftx" logits --model "$stage2" --tokens "1 2 3 4 5 6 7" --out "$work/stage2.npy" > /dev/null
cmp "$work/init.npy" "$work/stage2.npy" || { echo "FAIL: the --init run did not start from the model's weights"; exit 1; }
# A random start scores otherwise (the comparison can fail).
"$difftx" train --config "$init/config.json" --data "$work/data" --out "$work/random" --steps 1 --seq-len 64 \
  --micro-batch 2 --lr 1e-30 --warmup 0 --eval-every 0 --quiet
"$difftx" logits --model "$work/random/checkpoints/$(cat "$work/random/checkpoints/latest")" --tokens "1 2 3 4 5 6 7" \
  --out "$work/random.npy" > /dev/null
if cmp -s "$work/init.npy" "$work/random.npy"; then echo "FAIL: a random start gave the trained model's logits"; exit 1; fi

# A config that differs only in its context limit is the same model: a longer second stage.
sed 's/"max_position_embeddings": [0-9]*/"max_position_embeddings": 4096/' "$init/config.json" > "$work/longer.json"
grep -q '"max_position_embeddings": 4096' "$work/longer.json" || { echo "FAIL: no max_position_embeddings to change"; exit 1; }
"$difftx" train --init "$init" --config "$work/longer.json" --data "$work/data" --out "$work/longer" --steps 1 \
  --seq-len 32 --micro-batch 2 --lr 1e-30 --warmup 0 --eval-every 0 --quiet
expect_in "$work/longer/checkpoints/$(cat "$work/longer/checkpoints/latest")/config.json" '"max_position_embeddings": 4096'
expect_error "its model config differs from" "$difftx" train --init "$init" \
  --config "$root/tests/fixtures/train/baseline.json" --data "$work/data" --out "$work/r1" --steps 1
expect_error "the model directory does not exist" "$difftx" train --init "$work/nope" --config "$init/config.json" \
  --data "$work/data" --out "$work/r2" --steps 1
expect_error "cannot open" "$difftx" train --init "$work/nope" --data "$work/data" --out "$work/r3" --steps 1
echo "PASS"
