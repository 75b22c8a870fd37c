# Chat templates that take tools, end to end: `difftx template` against jinja2
# (tools/chat_template_oracle.py, transformers' settings) on conversations with tool definitions,
# assistant tool calls, tool results and template variables (tests/fixtures/chat/tool_conversations.json:
# also what OpenAI clients send - arguments as a JSON string, content null beside tool calls, named
# tool results, two system messages, content parts), with and without the generation prompt, byte
# for byte - on the real tool-taking templates that scripts/fetch-data brings (Qwen 2.5 and 3:
# <tool_call> blocks; Mistral Nemo: [TOOL_CALLS]; Llama 3.2: Meta's JSON tool calling, the Llama
# 3.1 format), on the ChatML tool template the serve tests use and on the templates of
# tests/fixtures/chat/tool_templates/. Where jinja2 raises (Llama's single-call rule), difftx raises
# the same message; where jinja2 fails otherwise (a template that cannot take content parts, say),
# or refuses the template, difftx fails too.
#
# DIFFTX_TOOL_TEMPLATES=DIR adds every *.jinja under DIR (say, a copy of vLLM's examples/ folder:
# see tests/fixtures/chat/tool_templates/README.md), rendered with <s> and </s> as the special tokens.
source "$(dirname "$0")/lib.bash"
fail() { echo "FAIL: $*"; exit 1; }
python3 -c "import jinja2" 2>/dev/null || fail "python3-jinja2 is missing (scripts/setup installs it): the oracle cannot run"
models=(qwen2_5 qwen3 mistral_nemo llama3_2)
for name in "${models[@]}"; do
  [ -f "$root/data/hf/$name/tokenizer_config.json" ] || { echo "SKIP: $root/data/hf/$name is missing (run scripts/setup)"; exit 77; }
done
oracle="$root/tools/chat_template_oracle.py"
export DIFFTX_TEMPLATE_DATE=2024-07-26

mkdir -p "$work/conv"
python3 - "$root/tests/fixtures/chat/tool_conversations.json" "$work/conv" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1], encoding="utf-8")):
    with open(f"{sys.argv[2]}/{c['name']}.json", "w", encoding="utf-8") as f:
        json.dump(c["input"], f, ensure_ascii=False)
PY

failures=0
check() {  # check LABEL ORACLE-ARGS... -- DIFFTX-ARGS...
  local label="$1"; shift
  local oracle_args=() difftx_args=()
  while [ "$1" != "--" ]; do oracle_args+=("$1"); shift; done; shift
  difftx_args=("$@")
  local same=0 raised=0 failed=0 rc_oracle=0
  rm -rf "$work/py"
  python3 "$oracle" "${oracle_args[@]}" --messages "$work"/conv/*.json --out-dir "$work/py" 2> "$work/oracle.err" ||
    rc_oracle=$?
  if [ "$rc_oracle" = 2 ]; then  # jinja2 refuses the template: so must difftx
    if "$difftx" template "${difftx_args[@]}" --messages "$work/conv/tools_offered.json" > /dev/null 2>&1; then
      echo "FAIL: $label: jinja2 refuses the template ($(cat "$work/oracle.err")), difftx renders it"
      failures=$((failures + 1))
    else
      echo "$label: refused by jinja2 and difftx alike"
    fi
    return
  fi
  if [ "$rc_oracle" != 0 ]; then
    echo "FAIL: $label: the oracle failed: $(cat "$work/oracle.err")"; failures=$((failures + 1)); return
  fi
  for conv in "$work"/conv/*.json; do
    for gen in "" --no-generation-prompt; do
      local what="$label $(basename "$conv" .json) ${gen:-(generation prompt)}" rc_cc=0
      local py="$work/py/$(basename "$conv" .json).${gen:+no}gen" rc_py
      rc_py="$(cat "$py.rc")"
      "$difftx" template "${difftx_args[@]}" --messages "$conv" $gen > "$work/cc.out" 2> "$work/cc.err" || rc_cc=$?
      case "$rc_py" in
        0)
          if [ "$rc_cc" != 0 ]; then
            echo "FAIL: $what: jinja2 renders, difftx fails: $(cat "$work/cc.err")"; failures=$((failures + 1))
          elif ! cmp -s "$py.out" "$work/cc.out"; then
            echo "FAIL: $what: the prompts differ"; diff "$py.out" "$work/cc.out" | head -10; failures=$((failures + 1))
          else
            same=$((same + 1))
          fi ;;
        3)
          local want got
          want="$(sed -n 's/^TemplateError: //p' "$py.err")"
          got="$(sed -n 's/^difftx template: error: //p' "$work/cc.err")"
          if [ "$rc_cc" = 0 ] || [ "$want" != "$got" ]; then
            echo "FAIL: $what: jinja2 raises '$want', difftx gave rc $rc_cc '$got'"; failures=$((failures + 1))
          else
            raised=$((raised + 1))
          fi ;;
        *)  # jinja2 fails to render (a TypeError, an undefined attribute, ...)
          if [ "$rc_cc" = 0 ]; then
            echo "FAIL: $what: jinja2 fails ($(cat "$py.err")), difftx renders"; failures=$((failures + 1))
          else
            failed=$((failed + 1))
          fi ;;
      esac
    done
  done
  echo "$label: $same identical prompts, $raised identical raise_exception messages, $failed failures alike"
}
for name in "${models[@]}"; do
  check "$name" --model "$root/data/hf/$name" -- --model "$root/data/hf/$name"
done
check chatml_tools --chat-template "$root/tests/fixtures/serve/chatml_tools.jinja" -- \
  --chat-template "$root/tests/fixtures/serve/chatml_tools.jinja"
mkdir -p "$work/tokens"
echo '{"bos_token": "<s>", "eos_token": "</s>"}' > "$work/tokens/tokenizer_config.json"
check_dir() {  # check_dir DIR: every *.jinja under DIR
  while IFS= read -r -d '' file; do
    local args=(--model "$work/tokens" --chat-template "$file")
    check "${file#"$1"/}" "${args[@]}" -- "${args[@]}"
  done < <(find "$1" -name '*.jinja' -print0 | sort -z)
}
check_dir "$root/tests/fixtures/chat/tool_templates"
if [ -n "${DIFFTX_TOOL_TEMPLATES:-}" ]; then
  [ -d "$DIFFTX_TOOL_TEMPLATES" ] || fail "DIFFTX_TOOL_TEMPLATES=$DIFFTX_TOOL_TEMPLATES is not a directory"
  check_dir "${DIFFTX_TOOL_TEMPLATES%/}"
fi
[ "$failures" = 0 ] || fail "$failures renderings differ from jinja2"
echo "tool templates: ok"
