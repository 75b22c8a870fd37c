# A Phi-4-mini-flash (SambaY hybrid) directory through the engine's commands: random weights, the
# Motif fixture's test tokenizer and a ChatML template beside them
# (tools/oracle/write_phi4flash_dir.py). `generate` (greedy twice the same, with --draft ngram, the
# same on Vulkan where there is a device, and its text the server's /v1/completions at temperature
# 0; the hybrid as a draft model an error), `generate --chat` against the server's chat completion,
# `chat` on stdin, and the startup line saying the prefix cache is off for recurrent state.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "SKIP: python3-numpy is missing (run scripts/setup)"; exit 77; }
model="$work/hybrid"
/usr/bin/python3 "$root/tools/oracle/write_phi4flash_dir.py" "$model"

gen() { "$difftx" generate --model "$model" --prompt "The Congress" --max-new-tokens 16 "$@"; }
gen --temperature 0 > "$work/g1.txt" 2> "$work/g1.err" || { echo "FAIL: generate"; cat "$work/g1.err"; exit 1; }
gen --temperature 0 > "$work/g2.txt" 2> /dev/null
cmp -s "$work/g1.txt" "$work/g2.txt" || { echo "FAIL: greedy generation is not deterministic"; exit 1; }
grep -q "^The Congress" "$work/g1.txt" || { echo "FAIL: stdout does not start with the prompt"; cat "$work/g1.txt"; exit 1; }
[ "$(wc -c < "$work/g1.txt")" -gt 14 ] || { echo "FAIL: nothing generated"; cat "$work/g1.txt"; exit 1; }
gen --temperature 0 --draft ngram --draft-tokens 4 2> /dev/null | cmp -s - "$work/g1.txt" ||
  { echo "FAIL: --draft ngram changed a hybrid model's greedy text"; exit 1; }
# A hybrid cannot be the draft (a draft model runs docs/SPEC.md's decoder): the error names --draft
# and the directory, and says what difftx runs a hybrid for.
expect_error "a draft model (--draft $model) is written for docs/SPEC.md's decoder" gen --draft "$model"
expect_in "$work/out.txt" 'which difftx runs for `logits`, `eval` and generation (`generate`, `chat`, `serve`'
gen --seed 7 --temperature 1.0 > "$work/s.txt" 2> /dev/null
# On the Vulkan device where this machine has one (lavapipe in CI), with the validation layer on:
# the CPU's greedy tokens.
if "$difftx" --version | grep "^vulkan:0 " > /dev/null; then
  DIFFTX_VULKAN_VALIDATION=1 gen --temperature 0 --device vulkan:0 > "$work/gv.txt" 2> "$work/gv.err" ||
    { echo "FAIL: generate --device vulkan:0"; cat "$work/gv.err"; exit 1; }
  cmp -s "$work/g1.txt" "$work/gv.txt" ||
    { echo "FAIL: greedy tokens on vulkan:0 differ from the CPU's"; cat "$work/g1.txt" "$work/gv.txt"; exit 1; }
  ! grep "vulkan validation" "$work/gv.err" || { echo "FAIL: validation messages on vulkan:0"; exit 1; }
fi
gen --temperature 0 --kv-dtype int8 > /dev/null 2>&1 || { echo "FAIL: an int8 cache"; exit 1; }
"$difftx" generate --model "$model" --chat --prompt "Hi" --max-new-tokens 12 --temperature 0 \
  > "$work/chat_gen.txt" 2> /dev/null || { echo "FAIL: generate --chat"; exit 1; }
printf 'Hi\nAgain\n' | "$difftx" chat --model "$model" --max-new-tokens 8 --temperature 0 > "$work/chat.txt" 2> "$work/chat.err" ||
  { echo "FAIL: chat"; cat "$work/chat.err"; exit 1; }

start_server --model-name hybrid
grep -q "prefix cache off (recurrent state" "$work/server.log" ||
  { echo "FAIL: the startup line does not say the prefix cache is off"; cat "$work/server.log"; exit 1; }
[ "$(post /v1/completions '{"prompt": "The Congress", "max_tokens": 16, "temperature": 0}')" = 200 ] ||
  { echo "FAIL: /v1/completions"; cat "$work/body.json"; exit 1; }
# The text compared in Python: random weights draw any byte, NUL included.
same_text() {  # same_text BODY_FIELD FILE DROP_PREFIX: the JSON field equals the file less the prefix and its last newline
  python3 - "$work/body.json" "$1" "$2" "$3" <<'PY'
import json, sys
body, field, path, prefix = sys.argv[1:]
got = eval("json.load(open(body))" + field)
want = open(path, "rb").read().decode("utf-8", "replace")[len(prefix):-1]
sys.exit(0 if got == want else 1)
PY
}
same_text "['choices'][0]['text']" "$work/g1.txt" "The Congress" ||
  { echo "FAIL: /v1/completions differs from generate"; cat "$work/body.json"; cat "$work/g1.txt"; exit 1; }
[ "$(post /v1/chat/completions '{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 12, "temperature": 0}')" = 200 ] ||
  { echo "FAIL: /v1/chat/completions"; cat "$work/body.json"; exit 1; }
same_text "['choices'][0]['message']['content']" "$work/chat_gen.txt" "" ||
  { echo "FAIL: chat completion vs generate --chat"; cat "$work/body.json"; cat "$work/chat_gen.txt"; exit 1; }
[ "$(server_errors)" = "" ] || { echo "FAIL: 5xx answers"; server_errors; exit 1; }
stop_server
echo "PASS"
