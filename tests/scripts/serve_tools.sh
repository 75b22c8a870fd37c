# Tool calling, structured output and reasoning through the official openai npm client
# (tools/serve_client/tools_check.mjs, every structured answer validated by ajv) and Anthropic's
# (messages_check.mjs, the Messages API): a ChatML
# template with <tool_call> blocks (the hermes family) on the small trained model, the other
# families' constrained calls on it through --tool-parser, then a reasoning template that opens
# <think> in the prompt on the Motif fixture. /apply-template with tools and tool calls renders
# what jinja2 renders. `difftx generate --json-schema` writes a document that validates, or fails
# saying the document is incomplete.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
install_serve_client
make_serve_model
# Tool definitions make long prompts: the model's context grows to 2048 positions (RoPE takes any).
python3 - "$model/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["max_position_embeddings"] = 2048
json.dump(c, open(sys.argv[1], "w"))
PY
template="$root/tests/fixtures/serve/chatml_tools.jinja"
start_server --chat-template "$template" --max-tool-calls 3
node "$client_dir/tools_check.mjs" "$base/v1" tools || { echo "FAIL: the tools check"; tail -20 "$work/server.log"; exit 1; }
node "$client_dir/messages_check.mjs" "$base" tools || { echo "FAIL: the Messages API check"; tail -20 "$work/server.log"; exit 1; }
[ -z "$(server_errors)" ] || { echo "FAIL: 5xx answers"; server_errors; exit 1; }

# /apply-template: a conversation with tools, a call (arguments as a JSON string, as clients send
# them) and its result, against jinja2 given the arguments as the object the server makes of them.
cat > "$work/conversation.json" <<'JSON'
{"tools": [{"type": "function", "function": {"name": "add", "description": "Adds.", "parameters": {"type": "object",
   "properties": {"b": {"type": "integer"}, "a": {"type": "integer"}}}}}],
 "messages": [{"role": "user", "content": "1+2?"},
   {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
     "function": {"name": "add", "arguments": "{\"b\": 2, \"a\": 1}"}}]},
   {"role": "tool", "tool_call_id": "call_1", "content": "3"}]}
JSON
python3 - "$work/conversation.json" "$work/oracle_input.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for m in c["messages"]:
    for call in m.get("tool_calls", []):
        call["function"]["arguments"] = json.loads(call["function"]["arguments"])
json.dump(c, open(sys.argv[2], "w"))
PY
[ "$(post /apply-template "$(cat "$work/conversation.json")")" = 200 ] || { echo "FAIL: /apply-template"; cat "$work/body.json"; exit 1; }
/usr/bin/python3 "$root/tools/chat_template_oracle.py" --chat-template "$template" --messages "$work/oracle_input.json" > "$work/want.txt"
[ "$(json_get "$work/body.json" "['prompt']")" = "$(cat "$work/want.txt")" ] ||
  { echo "FAIL: /apply-template with tools differs from jinja2"; cat "$work/body.json"; cat "$work/want.txt"; exit 1; }
stop_server

# Every other family: the calls its grammar lets the model write parse back into calls whose
# arguments validate, whole and streamed.
expect_error "--tool-parser 'pythonik' is not one of hermes, llama3_json, mistral, mistral_v11, pythonic, phi4_mini," \
  "$difftx" serve --model "$model" --port 0 --tool-parser pythonik
for family in llama3_json mistral mistral_v11 pythonic phi4_mini granite deepseek_v3 deepseek_v31 qwen3_coder glm45 kimi_k2 internlm \
  hunyuan_a13b minimax xlam granite_20b_fc nemotron_json seed_oss; do
  start_server --chat-template "$template" --max-tool-calls 3 --tool-parser "$family"
  node "$client_dir/tools_check.mjs" "$base/v1" calls "$family" ||
    { echo "FAIL: the $family calls check"; tail -20 "$work/server.log"; exit 1; }
  [ -z "$(server_errors)" ] || { echo "FAIL: 5xx answers ($family)"; server_errors; exit 1; }
  stop_server
done

# `difftx generate --json-schema`: the continuation is a document that validates.
cat > "$work/schema.json" <<'JSON'
{"type": "object", "properties": {"name": {"type": "string", "maxLength": 6}, "year": {"type": "integer", "minimum": 1776,
 "maximum": 2024}, "when": {"type": "string", "format": "date"}}, "required": ["name", "year"], "additionalProperties": false}
JSON
for seed in 1 2 3; do
  "$difftx" generate --model "$model" --prompt "The Union" --json-schema "$work/schema.json" --max-new-tokens 120 \
    --temperature 1.3 --seed "$seed" > "$work/generated.txt" 2> "$work/generate.err" || { echo "FAIL: generate"; cat "$work/generate.err"; exit 1; }
  python3 -c "import sys; t = open(sys.argv[1]).read(); print(t[len('The Union'):-1], end='')" "$work/generated.txt" > "$work/doc.json"
  node "$client_dir/validate.mjs" "$work/schema.json" "$work/doc.json" || { echo "FAIL: generate --json-schema seed $seed"; exit 1; }
done
echo "generate --json-schema: $(cat "$work/doc.json")"
# Cut short by --max-new-tokens, the document is incomplete: an error that says so.
expect_error "--json-schema: the reply is incomplete: --max-new-tokens 3 was reached before the JSON document was complete" \
  "$difftx" generate --model "$model" --prompt "The Union" --json-schema "$work/schema.json" --max-new-tokens 3
echo '{"type": "string", "format": "idn-email"}' > "$work/email.json"
expect_error "at #/format: format 'idn-email' is not supported" "$difftx" generate --model "$model" --prompt x \
  --json-schema "$work/email.json"

# Reasoning: a template that opens <think> in the prompt (the Motif fixture, as serve_motif.sh).
model="$work/motif"
cp -r "$root/tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer" "$model"
python3 - "$model/tokenizer_config.json" <<'PY'
import json, sys
template = ("{%- for message in messages -%}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
            "{%- endfor -%}{%- if add_generation_prompt -%}<|im_start|>assistant\n<think>\n{%- endif -%}")
json.dump({"eos_token": "<|im_end|>", "bos_token": None, "chat_template": template}, open(sys.argv[1], "w"))
config = sys.argv[1].replace("tokenizer_config.json", "config.json")
c = json.load(open(config))
c["max_position_embeddings"] = 1024  # room for the reasoning and the document
json.dump(c, open(config, "w"))
PY
start_server --model-name motif
node "$client_dir/tools_check.mjs" "$base/v1" reasoning || { echo "FAIL: the reasoning check"; tail -20 "$work/server.log"; exit 1; }
node "$client_dir/messages_check.mjs" "$base" reasoning ||
  { echo "FAIL: the Messages API reasoning check"; tail -20 "$work/server.log"; exit 1; }
stop_server
echo "PASS"
