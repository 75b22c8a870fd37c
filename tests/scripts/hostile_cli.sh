# Hostile command lines and run directories: every numeric option of every command refuses
# zero or negatives where they mean nothing, NaN, infinities, 1e999 and 2^63 with a message
# naming the option (before any file is read); two runs on one directory; a tampered
# state.json; --resume with fewer --steps than done; data without its tokenizer; a FIFO.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus
config="$root/tests/fixtures/train/baseline.json"
none="$work/none"  # options are checked before the model or data are opened

bad_values() {  # bad_values "command..." OPTION "extra bad values" (integer options: 2^63 is added)
  local cmd="$1" opt="$2" v
  for v in nan inf -inf 1e999 x "" $3; do
    # shellcheck disable=SC2086
    expect_error "--$opt" "$difftx" $cmd --$opt "$v"
    grep -qiE "expects|needs" "$work/out.txt" || { echo "FAIL: --$opt $v:"; cat "$work/out.txt"; exit 1; }
  done
}
ints="9223372036854775808 -9223372036854775809 1.5"
train="train --config $config --data $work/data --out $work/opt"
for opt in steps seq-len micro-batch log-every; do bad_values "$train" $opt "0 -1 $ints"; done
for opt in batch-tokens warmup eval-every eval-batches checkpoint-every; do bad_values "$train" $opt "-1 $ints"; done
bad_values "$train" keep-checkpoints "0 -1 4294967297 $ints"
bad_values "$train" lr "0 -1"
for opt in weight-decay grad-clip; do bad_values "$train" $opt "-1"; done
for opt in beta1 beta2; do bad_values "$train" $opt "1 -0.5"; done
bad_values "$train" min-lr-ratio "-1 2"
bad_values "$train" bucket-mb "0 -1"
bad_values "$train" collective-timeout "0 -1"
bad_values "$train" seed "$ints"
gen="generate --model $none --prompt hi"
for opt in max-new-tokens context top-k; do bad_values "$gen" $opt "-1 $ints"; done
bad_values "$gen" temperature "-1"
bad_values "$gen" top-p "0 2"
for opt in seq-len micro-batch; do bad_values "eval --model $none --data $none" $opt "0 -1 $ints"; done
bad_values "eval --model $none --data $none" max-batches "-1 $ints"
bad_values "prepare --corpus $none --out $work/p" val-fraction "0 1 -1"
bad_values "prepare --corpus $none --out $work/p" shard-tokens "0 -1 $ints"
bad_values "analyze niah --model $none --data $none" samples "0 -1 $ints"
bad_values "analyze niah --model $none --data $none" value-digits "0 10 $ints"
bad_values "analyze outliers --model $none --data $none" tokens "0 -1 $ints"
bad_values "analyze quant --model $none --data $none" max-batches "-1 $ints"
expect_error "--out needs a non-empty value" "$difftx" train --config "$config" --data "$work/data" --out ""
expect_error "--dist mpi was given" env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK \
  "$difftx" $train --dist mpi --steps 1

run=(train --config "$config" --data "$work/data" --seq-len 32 --micro-batch 2 --eval-batches 1 --quiet)
# Two runs on one directory: the second is refused, naming the first's PID.
"$difftx" "${run[@]}" --out "$work/lock" --steps 100000 > /dev/null 2>&1 & first=$!
for _ in $(seq 100); do [ -s "$work/lock/.lock" ] && break; sleep 0.1; done
expect_error "another difftx train (pid $first)" "$difftx" "${run[@]}" --out "$work/lock" --steps 10
expect_error "another difftx train (pid $first)" "$difftx" "${run[@]}" --out "$work/lock" --steps 10 --resume
kill "$first"; wait "$first" || true

# Resume: fewer --steps than done, and a tampered state.json.
"$difftx" "${run[@]}" --out "$work/r" --steps 4 --checkpoint-every 2 > /dev/null
expect_error "--steps 3 is below the 4 steps" "$difftx" "${run[@]}" --out "$work/r" --steps 3 --resume
state="$work/r/checkpoints/step_00000004/state.json"
sed -i 's/"step": 4/"step": -5/' "$state"
expect_error "'step' must be a positive integer, got -5" "$difftx" "${run[@]}" --out "$work/r" --steps 6 --resume
expect_in "$work/r/metrics.jsonl" '"step":4'  # the refused resume lost no line

# Data without its tokenizer; a FIFO as config.json.
mkdir -p "$work/notok" && cp "$work/data"/*.bin "$work/data/metadata.json" "$work/notok/"
expect_error "missing tokenizer file" "$difftx" train --config "$config" --data "$work/notok" --out "$work/nt" --steps 1
mkfifo "$work/fifo.json"
expect_error "not a regular file (a FIFO)" timeout 10 "$difftx" train --config "$work/fifo.json" --data "$work/data" \
  --out "$work/ff" --steps 1
echo "PASS"
