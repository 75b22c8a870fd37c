# A Motif checkpoint (MotifForCausalLM, tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer) served
# straight from its Hugging Face directory, with the chat template of its tokenizer_config.json:
# /apply-template renders what jinja2 renders (tools/chat_template_oracle.py, transformers'
# settings), and a greedy chat completion is what `difftx generate --chat` prints. Motif's own
# template could not be read here (docs/FORMATS.md "Motif"); this one is ChatML with a reasoning
# model's habits (a default system turn, earlier answers' <think> parts dropped, the answer opened
# with <think>), in the tokens the fixture's tokenizer.json has; the reply's thinking comes back as
# reasoning_content. A special token the model writes is left out of the reply's text
# (skip_special_tokens; also by generate, generate --chat and chat, unless --keep-special-tokens)
# and adds nothing to completions' text_offset; the end-of-sequence token that ends a reply counts in usage.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
model="$work/motif"
cp -r "$root/tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer" "$model"
python3 - "$model/tokenizer_config.json" <<'PY'
import json, sys
template = (
    "{%- if messages[0]['role'] != 'system' -%}<|im_start|>system\nBe brief.<|im_end|>\n{% endif -%}"
    "{%- for message in messages -%}"
    "{%- set content = message['content'] -%}"
    "{%- if message['role'] == 'assistant' and '</think>' in content -%}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') -%}{%- endif -%}"
    "<|im_start|>{{ message['role'] }}\n{{ content }}<|im_end|>\n"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|im_start|>assistant\n<think>\n{%- endif -%}")
json.dump({"eos_token": "<|im_end|>", "bos_token": None, "chat_template": template}, open(sys.argv[1], "w"))
PY
start_server --model-name motif

cat > "$work/messages.json" <<'JSON'
[{"role": "user", "content": "Hi"},
 {"role": "assistant", "content": "<think>\nTwo is even.\n</think>\n\nTwo."},
 {"role": "user", "content": "Another?"}]
JSON
[ "$(post /apply-template "{\"messages\": $(cat "$work/messages.json")}")" = 200 ] ||
  { echo "FAIL: /apply-template"; cat "$work/body.json"; exit 1; }
/usr/bin/python3 "$root/tools/chat_template_oracle.py" --model "$model" --messages "$work/messages.json" > "$work/want.txt"
[ "$(json_get "$work/body.json" "['prompt']")" = "$(cat "$work/want.txt")" ] ||
  { echo "FAIL: /apply-template differs from jinja2"; cat "$work/body.json"; cat "$work/want.txt"; exit 1; }
grep -q "Two is even" "$work/want.txt" && { echo "FAIL: the earlier answer's <think> part was kept"; exit 1; }

post /v1/chat/completions '{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 12, "temperature": 0}' > /dev/null
"$difftx" generate --model "$model" --chat --prompt "Hi" --max-new-tokens 12 --temperature 0 \
  > "$work/chat.txt" 2> /dev/null
want="$(python3 -c "import sys; print(open(sys.argv[1]).read()[:-1], end='')" "$work/chat.txt")"
# The prompt leaves <think> open: the reply is reasoning up to </think>, content after it
# (docs/STRUCTURED_OUTPUT.md); together they are what generate --chat printed.
got="$(python3 - "$work/body.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["choices"][0]["message"]
closed = "</think>" if m["content"] else ""
print(m["reasoning_content"] + closed + m["content"], end="")
PY
)"
[ "$got" = "$want" ] || { echo "FAIL: chat completion vs generate --chat"; cat "$work/body.json"; cat "$work/chat.txt"; exit 1; }
[ "$(json_get "$work/body.json" "['usage']['completion_tokens']")" -ge 1 ] || { echo "FAIL: no tokens"; exit 1; }
echo "motif chat: $(json_get "$work/body.json" "['choices'][0]")"

# skip_special_tokens (vLLM's, default true): a special token the model writes (<|im_start|>, id
# 277, drawn here through logit_bias) is no text, whole or streamed, unless the request keeps them;
# it is still a token (usage, logprobs).
forced='"max_tokens": 3, "temperature": 0, "logit_bias": {"277": 100}'
post /v1/completions "{\"prompt\": \"Hi\", $forced}" > /dev/null
[ "$(json_get "$work/body.json" "['choices'][0]['text']")" = "" ] &&
  [ "$(json_get "$work/body.json" "['usage']['completion_tokens']")" = 3 ] ||
  { echo "FAIL: a special token in a completion's text"; cat "$work/body.json"; exit 1; }
post /v1/completions "{\"prompt\": \"Hi\", $forced, \"skip_special_tokens\": false}" > /dev/null
[ "$(json_get "$work/body.json" "['choices'][0]['text']")" = "<|im_start|><|im_start|><|im_start|>" ] ||
  { echo "FAIL: skip_special_tokens false"; cat "$work/body.json"; exit 1; }
post /v1/chat/completions "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], $forced, \"logprobs\": true}" > /dev/null
python3 - "$work/body.json" <<'PY' || { echo "FAIL: a special token in a chat reply"; cat "$work/body.json"; exit 1; }
import json, sys
c = json.load(open(sys.argv[1]))["choices"][0]
assert (c["message"].get("reasoning_content") or "") + (c["message"]["content"] or "") == "", c
assert [t["token"] for t in c["logprobs"]["content"]] == ["<|im_start|>"] * 3, c["logprobs"]
PY
curl -sN -X POST -H 'Content-Type: application/json' "$base/v1/chat/completions" \
  --data-binary "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], $forced, \"stream\": true}" > "$work/stream.txt"
python3 - "$work/stream.txt" <<'PY' || { echo "FAIL: a special token in a streamed chat reply"; cat "$work/stream.txt"; exit 1; }
import json, sys
events = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith("data: {")]
deltas = [e["choices"][0]["delta"] for e in events if e["choices"]]
text = "".join(d.get("reasoning_content", "") + d.get("content", "") for d in deltas)
assert text == "" and events[-1]["choices"][0]["finish_reason"] == "length", events
PY
# The end-of-sequence token that ends a reply counts in usage, as OpenAI and vLLM count it, also as
# the first token (<|im_end|>, id 278, drawn through logit_bias): whole, streamed, and on chat.
eos='"max_tokens": 3, "temperature": 0, "logit_bias": {"278": 100}'
post /v1/completions "{\"prompt\": \"Hi\", $eos}" > /dev/null
[ "$(json_get "$work/body.json" "['choices'][0]['text']")" = "" ] &&
  [ "$(json_get "$work/body.json" "['usage']['completion_tokens']")" = 1 ] ||
  { echo "FAIL: an EOS first is not counted"; cat "$work/body.json"; exit 1; }
post /v1/chat/completions "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], $eos}" > /dev/null
[ "$(json_get "$work/body.json" "['usage']['completion_tokens']")" = 1 ] ||
  { echo "FAIL: a chat reply's EOS is not counted"; cat "$work/body.json"; exit 1; }
curl -sN -X POST -H 'Content-Type: application/json' "$base/v1/completions" \
  --data-binary "{\"prompt\": \"Hi\", $eos, \"stream\": true, \"stream_options\": {\"include_usage\": true}}" > "$work/stream.txt"
python3 - "$work/stream.txt" <<'PY' || { echo "FAIL: a streamed EOS is not counted"; cat "$work/stream.txt"; exit 1; }
import json, sys
events = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith("data: {")]
assert events[-1]["usage"]["completion_tokens"] == 1, events
assert "".join(c["text"] for e in events for c in e["choices"]) == "", events
PY
# difftx generate (after the prompt it echoes), generate --chat and difftx chat leave the special
# tokens the model writes out of their text, as the server's completions and chat completions do;
# --keep-special-tokens prints them (skip_special_tokens false).
post /v1/completions "{\"prompt\": \"Hi\", $forced}" > /dev/null
"$difftx" generate --model "$model" --prompt "Hi" --max-new-tokens 3 --temperature 0 --logit-bias 277=100 \
  > "$work/plain.txt" 2> /dev/null
[ "$(cat "$work/plain.txt")" = "Hi$(json_get "$work/body.json" "['choices'][0]['text']")" ] ||
  { echo "FAIL: generate printed special tokens"; cat "$work/plain.txt"; cat "$work/body.json"; exit 1; }
"$difftx" generate --model "$model" --prompt "Hi" --max-new-tokens 3 --temperature 0 --logit-bias 277=100 \
  --keep-special-tokens > "$work/plain.txt" 2> /dev/null
[ "$(cat "$work/plain.txt")" = "Hi<|im_start|><|im_start|><|im_start|>" ] ||
  { echo "FAIL: generate --keep-special-tokens"; cat "$work/plain.txt"; exit 1; }
for command in generate chat; do
  "$difftx" $command --help | grep -q -- --keep-special-tokens || { echo "FAIL: $command --help"; exit 1; }
done
for keep in "" --keep-special-tokens; do
  want=""
  [ -n "$keep" ] && want="<|im_start|><|im_start|><|im_start|>"
  "$difftx" generate --model "$model" --chat --prompt "Hi" --max-new-tokens 3 --temperature 0 --logit-bias 277=100 \
    $keep > "$work/chat.txt" 2> /dev/null
  [ "$(cat "$work/chat.txt")" = "$want" ] || { echo "FAIL: generate --chat $keep"; cat "$work/chat.txt"; exit 1; }
  printf 'Hi\n' | "$difftx" chat --model "$model" --max-new-tokens 3 --temperature 0 --logit-bias 277=100 $keep \
    > "$work/chat.txt" 2> /dev/null
  [ "$(cat "$work/chat.txt")" = "$want" ] || { echo "FAIL: chat $keep"; cat "$work/chat.txt"; exit 1; }
done
# Completions' logprobs show the special tokens, and text_offset indexes into the text returned:
# a token left out adds no characters (the prompt "Hi" is 2), whole and streamed.
post /v1/completions "{\"prompt\": \"Hi\", $forced, \"logprobs\": 0}" > /dev/null
python3 - "$work/body.json" <<'PY' || { echo "FAIL: text_offset counts a skipped special token"; cat "$work/body.json"; exit 1; }
import json, sys
lp = json.load(open(sys.argv[1]))["choices"][0]["logprobs"]
assert lp["tokens"] == ["<|im_start|>"] * 3 and lp["text_offset"] == [2, 2, 2], lp
PY
curl -sN -X POST -H 'Content-Type: application/json' "$base/v1/completions" \
  --data-binary "{\"prompt\": \"Hi\", $forced, \"logprobs\": 0, \"stream\": true}" > "$work/stream.txt"
python3 - "$work/stream.txt" <<'PY' || { echo "FAIL: streamed text_offset counts a skipped special token"; cat "$work/stream.txt"; exit 1; }
import json, sys
events = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith("data: {")]
offsets = [o for e in events for c in e["choices"] if c["logprobs"] for o in c["logprobs"]["text_offset"]]
assert offsets == [2, 2, 2], events
PY
stop_server
echo "PASS"
