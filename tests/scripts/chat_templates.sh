# Chat templates end to end: `difftx template` on every real template that scripts/fetch-data
# fetches, over the conversations of tests/fixtures/chat/conversations.json with and without the
# generation prompt, byte for byte against jinja2 (tools/chat_template_oracle.py, transformers'
# settings). Where jinja2 raises raise_exception, difftx must fail with the same message; where
# jinja2 fails otherwise (a str + list in the template), difftx must fail too. Also the CLI's
# own errors. The oracle missing is a failure: scripts/setup installs python3-jinja2.
source "$(dirname "$0")/lib.bash"
fail() { echo "FAIL: $*"; exit 1; }
python3 -c "import jinja2" 2>/dev/null || fail "python3-jinja2 is missing (scripts/setup installs it): the oracle cannot run"
templates=(llama3 llama3_1 llama3_2 qwen2_5 qwen3 gemma3 deepseek_v3 mistral_nemo internlm2 chatglm3)
for name in "${templates[@]}"; do
  [ -f "$root/data/hf/$name/tokenizer_config.json" ] || { echo "SKIP: $root/data/hf/$name is missing (run scripts/setup)"; exit 77; }
done
oracle="$root/tools/chat_template_oracle.py"
export DIFFTX_TEMPLATE_DATE=2024-07-26

mkdir -p "$work/conv"
python3 - "$root/tests/fixtures/chat/conversations.json" "$work/conv" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1], encoding="utf-8")):
    with open(f"{sys.argv[2]}/{c['name']}.json", "w", encoding="utf-8") as f:
        json.dump(c["input"], f, ensure_ascii=False)
PY

failures=0
for name in "${templates[@]}"; do
  model="$root/data/hf/$name"
  same=0 raised=0 errored=0
  rm -rf "$work/py"
  python3 "$oracle" --model "$model" --messages "$work"/conv/*.json --out-dir "$work/py"
  for conv in "$work"/conv/*.json; do
    conv_name="${conv##*/}" && conv_name="${conv_name%.json}"  # no process per name: 380 renderings
    for gen in "" --no-generation-prompt; do
      what="$name $conv_name ${gen:-(generation prompt)}"
      rc_cc=0
      py="$work/py/$conv_name.${gen:+no}gen"
      rc_py="$(< "$py.rc")"
      "$difftx" template --model "$model" --messages "$conv" $gen > "$work/cc.out" 2> "$work/cc.err" || rc_cc=$?
      if grep -q "tokenizer_config.json: chat template line" "$work/cc.err"; then  # a parse error
        echo "FAIL: $what: difftx rejects the template: $(cat "$work/cc.err")"; failures=$((failures + 1)); continue
      fi
      case "$rc_py" in
        0)
          if [ "$rc_cc" != 0 ]; then
            echo "FAIL: $what: jinja2 renders, difftx fails: $(cat "$work/cc.err")"; failures=$((failures + 1))
          elif ! cmp -s "$py.out" "$work/cc.out"; then
            echo "FAIL: $what: the prompts differ"; diff <(od -c "$py.out") <(od -c "$work/cc.out") | head -20
            failures=$((failures + 1))
          else
            same=$((same + 1))
          fi ;;
        3)
          want="$(sed -n 's/^TemplateError: //p' "$py.err")"
          got="$(sed -n 's/^difftx template: error: //p' "$work/cc.err")"
          if [ "$rc_cc" = 0 ] || [ "$want" != "$got" ]; then
            echo "FAIL: $what: jinja2 raises '$want', difftx gave rc $rc_cc '$got'"; failures=$((failures + 1))
          else
            raised=$((raised + 1))
          fi ;;
        4)
          if [ "$rc_cc" = 0 ]; then
            echo "FAIL: $what: jinja2 fails ($(cat "$py.err")), difftx renders"; failures=$((failures + 1))
          else
            errored=$((errored + 1))
          fi ;;
        *) echo "FAIL: $what: the oracle failed: $(cat "$py.err")"; failures=$((failures + 1)) ;;
      esac
    done
  done
  echo "$name: $same identical prompts, $raised identical raise_exception messages, $errored failing in both"
done
[ "$failures" = 0 ] || fail "$failures renderings differ from jinja2"

# The CLI: an object with messages and variables, --chat-template, errors.
printf '[{"role": "user", "content": "hi"}]' > "$work/m.json"
printf '%s\n' '{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{{ x }}' > "$work/t.jinja"
printf '{"messages": [{"role": "user", "content": "hi"}], "x": "!"}' > "$work/mx.json"
"$difftx" template --model "$root/data/hf/llama3" --chat-template "$work/t.jinja" --messages "$work/mx.json" > "$work/o.txt"
printf '<|begin_of_text|><user>hi!' | cmp -s - "$work/o.txt" || fail "--chat-template with the model's tokens: $(cat "$work/o.txt")"
mkdir -p "$work/bare"
printf '{"eos_token": "</s>"}' > "$work/bare/tokenizer_config.json"
expect_error "has no chat template" "$difftx" template --model "$work/bare" --messages "$work/m.json"
printf '%s' '{% include "x" %}' > "$work/bad.jinja"
expect_error "line 1: unsupported construct: the 'include' tag" "$difftx" template --chat-template "$work/bad.jinja" --messages "$work/m.json"
expect_error "expected an array of messages" "$difftx" template --model "$root/data/hf/llama3" --messages "$work/bare/tokenizer_config.json"
"$difftx" template --help | grep -q -- "--no-generation-prompt" || fail "--help does not list --no-generation-prompt"
echo "chat templates: ok"
