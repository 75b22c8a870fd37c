# The official openai npm client (tools/serve_client/api_check.mjs) against difftx serve:
# completions and chat completions, whole and streamed, seeded choices, logprobs, usage and
# typed errors; the chat template comes from --chat-template. /apply-template and a chat
# completion agree with `difftx template`, `difftx generate --chat` and `difftx chat` (its --stop too).
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
install_serve_client
make_serve_model
start_server --chat-template "$root/tests/fixtures/serve/chatml.jinja"
node "$client_dir/api_check.mjs" "$base/v1" || { echo "FAIL: the openai client check"; tail -20 "$work/server.log"; exit 1; }

# The same template renders the same prompt in /apply-template and `difftx template`, and a
# one-message chat completion is what `difftx generate --chat` prints.
template="$root/tests/fixtures/serve/chatml.jinja"
messages='[{"role": "user", "content": "Tell me about the Union."}]'
echo "$messages" > "$work/messages.json"
[ "$(post /apply-template "{\"messages\": $messages}")" = 200 ] || { echo "FAIL: /apply-template"; cat "$work/body.json"; exit 1; }
"$difftx" template --chat-template "$template" --messages "$work/messages.json" > "$work/rendered.txt"
[ "$(json_get "$work/body.json" "['prompt']")" = "$(cat "$work/rendered.txt")" ] || { echo "FAIL: /apply-template differs from difftx template"; exit 1; }
# OpenAI's developer messages reach a template that does not name the role as system messages.
post /apply-template '{"messages": [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi."}]}' > /dev/null
cp "$work/body.json" "$work/developer.json"
post /apply-template '{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi."}]}' > /dev/null
[ "$(json_get "$work/developer.json" "['prompt']")" = "$(json_get "$work/body.json" "['prompt']")" ] ||
  { echo "FAIL: a developer message is not rendered as the system one"; cat "$work/developer.json"; exit 1; }
# continue_final_message (vLLM's): the prompt ends where the final assistant message's text does.
post /tokenize '{"content": "<|im_start|>user\nHi.<|im_end|>\n<|im_start|>assistant\nThe answer", "add_special": true}' > /dev/null
want_tokens="$(json_get "$work/body.json" "['tokens'].__len__()")"
[ "$(post /v1/chat/completions '{"messages": [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "The answer"}],
     "add_generation_prompt": false, "continue_final_message": true, "max_tokens": 1}')" = 200 ] ||
  { echo "FAIL: continue_final_message"; cat "$work/body.json"; exit 1; }
[ "$(json_get "$work/body.json" "['usage']['prompt_tokens']")" = "$want_tokens" ] ||
  { echo "FAIL: continue_final_message's prompt is not cut after the final message"; cat "$work/body.json"; exit 1; }
post /v1/chat/completions "{\"messages\": $messages, \"max_tokens\": 16, \"temperature\": 1, \"seed\": 3}" > /dev/null
"$difftx" generate --model "$model" "${device_args[@]}" --chat --chat-template "$template" --prompt "Tell me about the Union." \
  --max-new-tokens 16 --temperature 1 --seed 3 > "$work/chat.txt" 2> /dev/null
want="$(python3 -c "import sys; print(open(sys.argv[1]).read()[:-1], end='')" "$work/chat.txt")"
[ "$(json_get "$work/body.json" "['choices'][0]['message']['content']")" = "$want" ] ||
  { echo "FAIL: chat completion vs generate --chat"; cat "$work/body.json"; cat "$work/chat.txt"; exit 1; }
# `difftx chat` answers its first line the same; its second turn sees the whole conversation.
printf 'Tell me about the Union.\nAnd the Congress?\n' |
  "$difftx" chat --model "$model" "${device_args[@]}" --chat-template "$template" --max-new-tokens 16 --temperature 1 --seed 3 \
  > "$work/chat2.txt" 2> /dev/null
[ "$(head -n 1 "$work/chat2.txt")" = "$want" ] || { echo "FAIL: difftx chat's first reply"; cat "$work/chat2.txt"; exit 1; }
[ "$(wc -l < "$work/chat2.txt")" = 2 ] || { echo "FAIL: difftx chat gave no second reply"; cat "$work/chat2.txt"; exit 1; }
# --stop ends a reply of `difftx chat` before the first stop string, as it ends generate's.
stop="${want:4:3}"
printf 'Tell me about the Union.\n' |
  "$difftx" chat --model "$model" "${device_args[@]}" --chat-template "$template" --max-new-tokens 16 --temperature 1 --seed 3 \
  --stop "$stop" > "$work/chat3.txt" 2> /dev/null
[ "$(head -n 1 "$work/chat3.txt")" = "${want%%"$stop"*}" ] ||
  { echo "FAIL: difftx chat --stop \"$stop\""; cat "$work/chat3.txt"; exit 1; }
echo "chat: $want"
stop_server
echo "PASS"
