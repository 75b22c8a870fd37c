# Hostile command lines and run directories: every numeric option of every command refuses
# zero or negatives where they mean nothing, NaN, infinities, 1e999 and 2^63 with a message
# naming the option (before any file is read); text that is not UTF-8 in an option or a corpus
# file name; a directory of extensionless text files; a repeated JSONL key; out of memory; two
# runs on one directory; a tampered state.json; --resume with fewer --steps than done;
# --eval-batches 0; a vocab_size above the data's; data without its tokenizer; a FIFO.
source "$(dirname "$0")/lib.bash"
prepare_small_corpus
config="$root/tests/fixtures/train/baseline.json"
none="$work/none"  # options are checked before the model or data are opened

bad_values() {  # bad_values "command..." OPTION "extra bad values" (integer options: 2^63 is added)
  local cmd="$1" opt="$2" v out
  for v in nan inf -inf 1e999 x "" $3; do
    # shellcheck disable=SC2086
    expect_error "--$opt" "$difftx" $cmd --$opt "$v"
    out="$(< "$work/out.txt")" && out="${out,,}"  # no grep: some 800 values
    [[ "$out" == *expects* || "$out" == *needs* ]] || { echo "FAIL: --$opt $v:"; cat "$work/out.txt"; exit 1; }
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
bad_values "$gen" min-p "-0.1 2"
for opt in presence-penalty frequency-penalty; do bad_values "$gen" $opt "-2.5 3 nan"; done
bad_values "$gen" repetition-penalty "0 -1 10.5 nan"
bad_values "$gen" logit-bias "1 =1 1= 1=x 1=101 1=-100.5 1=nan -1=1 2147483648=1 1=1, ,1=1 1=1,,2=2 1:1"
expect_error "--logit-bias: token 1 is given twice" "$difftx" $gen --logit-bias 1=1,1=2
for opt in seq-len micro-batch; do bad_values "eval --model $none --data $none" $opt "0 -1 $ints"; done
bad_values "eval --model $none --data $none" max-batches "-1 $ints"
bad_values "prepare --corpus $none --out $work/p" val-fraction "0 1 -1"
bad_values "prepare --corpus $none --out $work/p" shard-tokens "0 -1 $ints"
bad_values "prepare --corpus $none --out $work/p" max-document-bytes "-1 $ints"
bad_values "analyze niah --model $none --data $none" samples "0 -1 $ints"
bad_values "analyze niah --model $none --data $none" value-digits "0 10 $ints"
bad_values "analyze outliers --model $none --data $none" tokens "0 -1 $ints"
bad_values "analyze quant --model $none --data $none" max-batches "-1 $ints"
for opt in micro-batch seq-len; do
  for target in outliers quant; do bad_values "analyze $target --model $none --data $none" $opt "0 -1 $ints"; done
done
bad_values "analyze quant --model $none --data $none" bits "-1 1 17 $ints"
att="analyze attention --model $none --data $none"
for opt in context needles per-depth; do bad_values "$att" $opt "0 -1 $ints"; done
for opt in map-layer map-head; do bad_values "$att" $opt "-2 $ints"; done
bad_values "$att" depths "-0.5 2 0,2"
bad_values "$att" seed "$ints"
niah="analyze niah --model $none --data $none"
for opt in contexts needles queried; do bad_values "$niah" $opt "0 -1 1,0 $ints"; done
bad_values "$niah" depths "-0.5 2"
bad_values "$niah" seed "$ints"
for opt in pairs queries samples; do bad_values "analyze mqar --model $none --data $none" $opt "0 -1 $ints"; done
bad_values "analyze mqar --model $none --data $none" seed "$ints"
bad_values "prepare --corpus $none --out $work/p" vocab-size "-1 16777217 $ints"
bad_values "init --config $none --out $work/i" seed "$ints"
exp="experiment compare --data $none --out $work/x"
bad_values "$exp" tokens "-1 $ints"
for opt in niah-samples mqar-pairs mqar-queries mqar-samples attention-prompts outlier-tokens; do
  bad_values "$exp --tokens 1" $opt "0 -1 $ints"
done
for opt in niah-contexts niah-needles niah-queried; do bad_values "$exp --tokens 1" $opt "0 -1 $ints"; done
bad_values "$exp --tokens 1" niah-depths "-0.5 2"
bad_values "$exp --tokens 1" quant-batches "-1 $ints"
bad_values "$exp --tokens 1" bits "-1 65 $ints"
expect_error "between 2 and 16, got 17" "$difftx" $exp --tokens 1 --bits 0,17  # before any model trains
for opt in micro-batch seq-len rounds; do bad_values "bench train" $opt "0 -1 $ints"; done
bad_values "bench infer" contexts "0 -1 $ints"
bad_values "bench infer" repeats "0 -1 1001 $ints"
for opt in prompt repeats; do bad_values "bench infer --model $none" $opt "0 -1 $ints"; done
bad_values "bench quant" prefill-rows "0 7 8193 $ints"
expect_error "--out needs a non-empty value" "$difftx" train --config "$config" --data "$work/data" --out ""
expect_error "unknown device ''" "$difftx" generate --model "$none" --prompt hi --device ""  # not the CPU
expect_error "--init needs a non-empty value" "$difftx" train --init "" --data "$work/data" --out "$work/i0"
expect_error "--init-from needs a non-empty value" "$difftx" $exp --tokens 1 --init-from ""
expect_error "--dist mpi was given" env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK \
  "$difftx" $train --dist mpi --steps 1

# Text that is not UTF-8 in an option or a corpus file name: refused before anything is written
# (metadata.json and run.json record them as JSON strings).
expect_error "the value of --data is not valid UTF-8 (byte 1)" "$difftx" train --config "$config" \
  --data "$(printf 'd\xfe')" --out "$work/u8run"
mkdir -p "$work/u8" && cp "$root"/data/sotu/190[0-3]*.txt "$work/u8/" && cp "$work/u8/1901"*.txt "$work/u8/$(printf 'x\xff').txt"
expect_error "corpus file name '$work/u8/$(printf 'x\xff').txt': invalid UTF-8 at byte offset" \
  "$difftx" prepare --corpus "$work/u8" --tokenizer "$work/data" --out "$work/u8data" --quiet
[ ! -e "$work/u8data" ] || { echo "FAIL: prepare wrote $work/u8data before refusing the file name"; exit 1; }
# A directory of text files without .txt/.md/.jsonl names: the error says how to pass them, and
# named one by one they are read as plain text.
mkdir -p "$work/licenses"
for f in "$root"/data/sotu/190[0-3]*.txt; do cp "$f" "$work/licenses/$(basename "$f" .txt)"; done
expect_error "read as plain text when named one by one (--corpus DIR/*)" \
  "$difftx" prepare --corpus "$work/licenses" --tokenizer "$work/data" --out "$work/lic" --quiet
"$difftx" prepare --corpus "$work/licenses"/* --tokenizer "$work/data" --out "$work/lic" --quiet > /dev/null
[ "$(grep -c '"path": ".*/licenses/' "$work/lic/metadata.json")" = 4 ] ||
  { echo "FAIL: the 4 files named one by one are not the dataset's sources"; exit 1; }
# A record of a JSONL corpus with a repeated key (the last would silently win).
printf '{"text": "one", "text": "two"}\n' > "$work/dup.jsonl"
expect_error "names 'text' twice in one object" "$difftx" prepare --corpus "$work/dup.jsonl" --tokenizer "$work/data" \
  --out "$work/dup" --quiet
# Out of memory (a 2^28-token micro-batch of a small model is terabytes): a message naming the
# options that size allocations, not 'unexpected error: std::bad_alloc'. ASan must return null
# for an impossible allocation as malloc does.
ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1" expect_error \
  "out of memory; a size from an option or a file (--micro-batch, --seq-len" \
  "$difftx" train --config "$config" --data "$work/data" --out "$work/oom" --seq-len 256 --micro-batch 1048576 --steps 1

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

# --eval-batches 0 measures no validation loss and says so (it reported "val loss nan").
"$difftx" train --config "$config" --data "$work/data" --seq-len 32 --micro-batch 2 --eval-batches 0 \
  --out "$work/noval" --steps 2 | grep -qF "val loss not measured" ||
  { echo "FAIL: --eval-batches 0 did not say the val loss was not measured"; exit 1; }
if grep -q val_loss "$work/noval/metrics.jsonl"; then echo "FAIL: --eval-batches 0 logged a val loss"; exit 1; fi
# A config whose vocab_size exceeds the data's vocabulary trains, and says which rows are idle.
sed 's/"vocab_size": 512/"vocab_size": 2048/' "$config" > "$work/big_vocab.json"
"$difftx" train --config "$work/big_vocab.json" --data "$work/data" --out "$work/bv" --seq-len 32 --micro-batch 2 \
  --steps 1 --eval-batches 1 > "$work/bv.txt"
expect_in "$work/bv.txt" "has vocab_size 2048 but the data's tokenizer has 512 tokens: 1536 embedding rows will never see a token"

# Data without its tokenizer; a FIFO as config.json.
mkdir -p "$work/notok" && cp "$work/data"/*.bin "$work/data/metadata.json" "$work/notok/"
expect_error "missing tokenizer file" "$difftx" train --config "$config" --data "$work/notok" --out "$work/nt" --steps 1
mkfifo "$work/fifo.json"
expect_error "not a regular file (a FIFO)" timeout 10 "$difftx" train --config "$work/fifo.json" --data "$work/data" \
  --out "$work/ff" --steps 1
echo "PASS"
