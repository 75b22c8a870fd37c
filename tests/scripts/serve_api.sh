# difftx serve end to end over curl: /health, /v1/models, tokenize and detokenize, greedy and
# seeded completions equal to `difftx generate` with the same prompt, length and seed, raw SSE framing of
# completion streams, n choices and stop strings, logit_bias, speculative decoding per request (prompt lookup,
# and a server's --draft DIR), the request log, /metrics, and SIGTERM exiting 0.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
make_serve_model
start_server --model-name tiny --log-format json

# Health, models, the page.
[ "$(curl -s "$base/health")" = '{"status":"ok"}' ] || { echo "FAIL: /health"; exit 1; }
curl -s "$base/v1/models" > "$work/models.json"
[ "$(json_get "$work/models.json" "['data'][0]['id']")" = tiny ] || { echo "FAIL: /v1/models"; cat "$work/models.json"; exit 1; }
curl -s "$base/v1/models/tiny" > "$work/model.json"
[ "$(json_get "$work/model.json" "['id']")" = tiny ] || { echo "FAIL: /v1/models/tiny"; cat "$work/model.json"; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/v1/models/other")" = 404 ] || { echo "FAIL: /v1/models/other is not a 404"; exit 1; }
# CORS, as llama-server and vLLM answer: any origin, and the browser's preflight.
curl -s -D "$work/cors.txt" -o /dev/null -H "Origin: http://localhost:3000" "$base/v1/models"
grep -qi "^access-control-allow-origin: \*" "$work/cors.txt" || { echo "FAIL: no CORS header"; cat "$work/cors.txt"; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' -X OPTIONS -H "Origin: http://localhost:3000" \
     -H "Access-Control-Request-Method: POST" "$base/v1/chat/completions")" = 204 ] || { echo "FAIL: the CORS preflight"; exit 1; }
curl -s "$base/" > "$work/page.html"
grep -q "<title>difftx</title>" "$work/page.html" || { echo "FAIL: GET / is not the chat page"; exit 1; }

# Tokenize and detokenize round trip; add_special puts the prompt prefix (end of text) first.
[ "$(post /tokenize '{"content": "The Congress"}')" = 200 ] || { echo "FAIL: /tokenize"; cat "$work/body.json"; exit 1; }
ids="$(json_get "$work/body.json" "['tokens']")"
post /tokenize '{"content": "The Congress", "add_special": true}' > /dev/null
[ "$(json_get "$work/body.json" "['tokens'][1:]")" = "$ids" ] || { echo "FAIL: add_special"; cat "$work/body.json"; exit 1; }
post /detokenize "{\"tokens\": $ids}" > /dev/null
[ "$(json_get "$work/body.json" "['content']")" = "The Congress" ] || { echo "FAIL: detokenize"; cat "$work/body.json"; exit 1; }

# Greedy completions are what `difftx generate` prints for the same prompt and length.
for prompt in "The Congress" "It is" "We"; do
  "$difftx" generate --model "$model" "${device_args[@]}" --prompt "$prompt" --max-new-tokens 24 --temperature 0 > "$work/gen.txt" 2> /dev/null
  want="$(python3 -c "import sys; t=open(sys.argv[1]).read(); print(t[len(sys.argv[2]):-1], end='')" "$work/gen.txt" "$prompt")"
  [ "$(post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 24, \"temperature\": 0}")" = 200 ] ||
    { echo "FAIL: completion"; cat "$work/body.json"; exit 1; }
  got="$(json_get "$work/body.json" "['choices'][0]['text']")"
  [ "$got" = "$want" ] || { echo "FAIL: '$prompt': server '$got' vs generate '$want'"; exit 1; }
  # Speculative decoding per request (prompt lookup) gives the same greedy text.
  post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 24, \"temperature\": 0, \"draft\": \"ngram\", \"draft_tokens\": 4}" > /dev/null
  got="$(json_get "$work/body.json" "['choices'][0]['text']")"
  [ "$got" = "$want" ] || { echo "FAIL: '$prompt' with draft ngram: '$got' vs '$want'"; exit 1; }
done
greedy_prompt="$prompt" greedy_text="$want"
# logit_bias: +100 on a token makes it every greedy token; -100 on the greedy first token makes
# the first another.
post /detokenize '{"tokens": [65, 65, 65, 65]}' > /dev/null
forced="$(json_get "$work/body.json" "['content']")"
post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 4, \"temperature\": 0, \"logit_bias\": {\"65\": 100}}" > /dev/null
[ "$(json_get "$work/body.json" "['choices'][0]['text']")" = "$forced" ] || { echo "FAIL: logit_bias +100"; cat "$work/body.json"; exit 1; }
post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 1, \"temperature\": 0}" > /dev/null
first="$(json_get "$work/body.json" "['choices'][0]['text']")"
post /tokenize "$(python3 -c 'import json, sys; print(json.dumps({"content": sys.argv[1]}))' "$first")" > /dev/null
first_id="$(json_get "$work/body.json" "['tokens'][0]")"
post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 1, \"temperature\": 0, \"logit_bias\": {\"$first_id\": -100}}" > /dev/null
[ "$(json_get "$work/body.json" "['choices'][0]['text']")" != "$first" ] || { echo "FAIL: logit_bias -100 on '$first' ($first_id)"; exit 1; }
echo "greedy: $(json_get "$work/body.json" "['choices'][0]")"
# Seeded sampling too: the same seed draws the same tokens in both.
for seed in 7 8; do
  "$difftx" generate --model "$model" "${device_args[@]}" --prompt "The Congress" --max-new-tokens 24 --temperature 1 --seed $seed > "$work/gen.txt" 2> /dev/null
  want="$(python3 -c "import sys; t=open(sys.argv[1]).read(); print(t[len('The Congress'):-1], end='')" "$work/gen.txt")"
  post /v1/completions "{\"prompt\": \"The Congress\", \"max_tokens\": 24, \"temperature\": 1, \"seed\": $seed}" > /dev/null
  got="$(json_get "$work/body.json" "['choices'][0]['text']")"
  [ "$got" = "$want" ] || { echo "FAIL: seed $seed: server '$got' vs generate '$want'"; exit 1; }
done
echo "seeded: $got"

# Raw SSE framing: every event is 'data: <json>' and a blank line, the last is [DONE]; the
# usage chunk has empty choices; the streamed text is the whole response's.
curl -s -N -X POST -H 'Content-Type: application/json' "$base/v1/completions" \
  --data '{"prompt": "The Congress", "max_tokens": 24, "temperature": 0, "stream": true, "stream_options": {"include_usage": true}}' \
  > "$work/stream.txt"
python3 - "$work/stream.txt" "$work/body.json" <<'PY'
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
whole = json.load(open(sys.argv[2]))
assert raw.endswith("data: [DONE]\n\n"), raw[-200:]
events = raw.split("\n\n")[:-1]
chunks = []
for e in events:
    if e.startswith(":"):
        continue  # a keep-alive comment
    assert e.startswith("data: ") and "\n" not in e, repr(e)
    if e != "data: [DONE]":
        chunks.append(json.loads(e[6:]))
assert all(c["object"] == "text_completion" and c["id"] == chunks[0]["id"] for c in chunks)
usage = chunks[-1]
assert usage["choices"] == [] and usage["usage"]["completion_tokens"] > 0, usage
text = "".join(ch["text"] for c in chunks[:-1] for ch in c["choices"])
finish = [ch["finish_reason"] for c in chunks[:-1] for ch in c["choices"] if ch["finish_reason"]]
assert finish in (["stop"], ["length"]), finish
print("stream: %d chunks, text %r" % (len(chunks), text))
PY
[ $? = 0 ] || { echo "FAIL: SSE framing"; head -c 2000 "$work/stream.txt"; exit 1; }

# n choices, seeded: repeatable; a stop string never appears in the text.
body='{"prompt": "The Congress", "max_tokens": 20, "temperature": 1.0, "seed": 3, "n": 3}'
post /v1/completions "$body" > /dev/null; cp "$work/body.json" "$work/n1.json"
post /v1/completions "$body" > /dev/null
[ "$(json_get "$work/n1.json" "['choices']")" = "$(json_get "$work/body.json" "['choices']")" ] || { echo "FAIL: seeded n=3 not repeatable"; exit 1; }
[ "$(json_get "$work/body.json" "['choices'].__len__()")" = 3 ] || { echo "FAIL: n=3"; exit 1; }
first_word="$(json_get "$work/n1.json" "['choices'][0]['text'].split()[1]")"
post /v1/completions "{\"prompt\": \"The Congress\", \"max_tokens\": 20, \"temperature\": 1.0, \"seed\": 3, \"stop\": [\"$first_word\"]}" > /dev/null
if json_get "$work/body.json" "['choices'][0]['text']" | grep -qF -- "$first_word"; then
  echo "FAIL: stop string '$first_word' in the text"; cat "$work/body.json"; exit 1
fi
[ "$(json_get "$work/body.json" "['choices'][0]['finish_reason']")" = stop ] || { echo "FAIL: stop finish_reason"; cat "$work/body.json"; exit 1; }

# A model without a chat template: a clear 400 for chat.
[ "$(post /v1/chat/completions '{"messages": [{"role": "user", "content": "hi"}]}')" = 400 ] || { echo "FAIL: chat without a template"; exit 1; }
grep -q "no chat template" "$work/body.json" || { echo "FAIL: chat error message"; cat "$work/body.json"; exit 1; }
[ "$(post /v1/completions '{"prompt": "x", "draft": "model"}')" = 400 ] || { echo "FAIL: draft model without one"; exit 1; }
grep -q "needs a server started with --draft DIR" "$work/body.json" || { echo "FAIL: draft error"; cat "$work/body.json"; exit 1; }

# Metrics and the request log.
curl -s "$base/metrics" > "$work/metrics.txt"
expect_in "$work/metrics.txt" 'difftx_requests_total{endpoint="/v1/completions",status="200"}' \
  "difftx_kv_blocks_used 0" "difftx_time_to_first_token_seconds_count" "difftx_inter_token_latency_seconds_bucket" \
  "difftx_prefix_cache_hit_rate" "difftx_queue_length 0" "difftx_draft_tokens_total" \
  "difftx_draft_accepted_tokens_total" "difftx_draft_acceptance_rate"
python3 - "$work/server.log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
done = [l for l in lines if l["path"] == "/v1/completions" and l["status"] == 200]
assert done and all(l["generated_tokens"] > 0 and l["prompt_tokens"] > 0 for l in done), done[:3]
print("log: %d JSON lines, e.g. %s" % (len(lines), json.dumps(done[0])))
PY
stop_server
grep -q "finishing in-flight requests" "$work/server.log" || { echo "FAIL: no shutdown line"; tail "$work/server.log"; exit 1; }

# A server started with --draft DIR (the model itself, so every draft is accepted): a request that
# asks for the draft model gets the same greedy text, and /metrics counts its drafts.
start_server --model-name tiny --draft "$model" --draft-tokens 3
[ "$(post /v1/completions "{\"prompt\": \"$greedy_prompt\", \"max_tokens\": 24, \"temperature\": 0, \"draft\": \"model\"}")" = 200 ] ||
  { echo "FAIL: draft model"; cat "$work/body.json"; exit 1; }
[ "$(json_get "$work/body.json" "['choices'][0]['text']")" = "$greedy_text" ] || { echo "FAIL: draft model text"; exit 1; }
[ "$(metric difftx_draft_tokens_total)" != 0 ] || { echo "FAIL: no drafted tokens with --draft DIR"; exit 1; }
[ "$(metric difftx_draft_tokens_total)" = "$(metric difftx_draft_accepted_tokens_total)" ] ||
  { echo "FAIL: the model drafting for itself had drafts rejected"; exit 1; }
stop_server
echo "PASS"
