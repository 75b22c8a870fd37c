# Hostile and malformed requests to difftx serve: bad JSON, wrong types, out-of-range and huge
# numbers, unsupported parameters, schemas and grammars that cannot be enforced, an unknown model, a prompt longer than the context, bodies over
# the limit (413) or cut short, unknown routes (404) and methods (405), missing or wrong API keys
# (401), unknown and malformed conversations, items and responses. Every one is a 4xx with an OpenAI-shaped error, and the server stays healthy.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
make_serve_model
start_server --api-key sekrit --max-body-bytes 65536 --read-timeout 2
auth=(-H "Authorization: Bearer sekrit")

# expect STATUS PARAM PATH BODY: the status, and an error object naming PARAM ("" for none).
expect() {
  local want="$1" param="$2" path="$3" data="$4" got
  got="$(post "$path" "$data" "${auth[@]}")"
  [ "$got" = "$want" ] || { echo "FAIL: $path $data: status $got, expected $want"; cat "$work/body.json"; exit 1; }
  python3 - "$work/body.json" "$param" <<'PY' || { echo "FAIL: $path $data: not an OpenAI error"; cat "$work/body.json"; exit 1; }
import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert set(e) == {"message", "type", "param", "code"} and e["message"] and e["type"], e
assert (e["param"] or "") == sys.argv[2], (e["param"], sys.argv[2])
PY
}

C=/v1/completions
# Malformed JSON and wrong shapes.
expect 400 "" $C '{"prompt": "a"'
expect 400 "" $C 'not json'
expect 400 "" $C ''
expect 400 "" $C '[1, 2]'
expect 400 "" $C '{"prompt": "a", "prompt": "b"}'
expect 400 "" $C '{"prompt": "\ud800"}'
expect 400 "" $C "$(python3 -c 'print("[" * 5000 + "]" * 5000)')"
expect 400 "" $C '{"prompt": "a", "max_tokens": NaN}'
# Wrong types.
expect 400 prompt $C '{"prompt": 5}'
expect 400 prompt $C '{"prompt": [1, "a"]}'
expect 400 max_tokens $C '{"prompt": "a", "max_tokens": "5"}'
expect 400 temperature $C '{"prompt": "a", "temperature": "hot"}'
expect 400 stream $C '{"prompt": "a", "stream": "yes"}'
expect 400 stop $C '{"prompt": "a", "stop": 7}'
# Out of range, negative and huge numbers.
expect 400 max_tokens $C '{"prompt": "a", "max_tokens": -1}'
expect 400 max_tokens $C '{"prompt": "a", "max_tokens": 1e300}'
expect 400 max_tokens $C '{"prompt": "a", "max_tokens": 123456789012345678901234567890}'
expect 400 temperature $C '{"prompt": "a", "temperature": -0.5}'
expect 400 top_p $C '{"prompt": "a", "top_p": 0}'
expect 400 presence_penalty $C '{"prompt": "a", "presence_penalty": 2.5}'
expect 400 repetition_penalty $C '{"prompt": "a", "repetition_penalty": 0}'
expect 400 n $C '{"prompt": "a", "n": 100000}'
expect 400 logprobs $C '{"prompt": "a", "logprobs": 6}'
expect 400 prompt $C '{"prompt": [999999]}'
expect 400 stop $C '{"prompt": "a", "stop": ["1", "2", "3", "4", "5"]}'
# Unsupported and unknown parameters; an unknown model.
expect 400 max_tokens $C '{"prompt": "a", "max_tokens": 0}'
expect 400 prompt_logprobs $C '{"prompt": "a", "prompt_logprobs": 21}'
expect 400 prompt_logprobs $C '{"prompt": "a", "prompt_logprobs": 1, "stream": true}'
expect 400 bad_words $C '{"prompt": "a", "bad_words": [" "]}'
expect 400 bad_words $C '{"prompt": "a", "bad_words": "a"}'
expect 400 best_of $C '{"prompt": "a", "best_of": 3}'
expect 400 suffix $C '{"prompt": "a", "suffix": "b"}'
expect 400 logit_bias $C '{"prompt": "a", "logit_bias": {"1": 101}}'
expect 400 frobnicate $C '{"prompt": "a", "frobnicate": true}'
expect 400 tools /v1/chat/completions '{"messages": [{"role": "user", "content": "a"}], "tools": [{"type": "function"}]}'
expect 400 response_format /v1/chat/completions '{"messages": [{"role": "user", "content": "a"}], "response_format": {"type": "xml"}}'
# json_schema's name: required, and OpenAI's shape (letters, digits, '_', '-'; at most 64).
expect 400 response_format.json_schema.name $C '{"prompt": "a", "response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}'
expect 400 response_format.json_schema.name $C '{"prompt": "a", "response_format": {"type": "json_schema", "json_schema": {"name": "a b", "schema": {}}}}'
# Schemas and grammars that cannot be enforced: 400s naming the keyword's path.
expect 400 response_format $C '{"prompt": "a", "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"not": {}}}}}'
grep -q '#/not' "$work/body.json" || { echo "FAIL: the keyword's path is not named"; cat "$work/body.json"; exit 1; }
expect 400 response_format $C '{"prompt": "a", "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"$ref": "#"}}}}'
expect 400 grammar $C '{"prompt": "a", "grammar": "root ::= ("}'
expect 404 model $C '{"model": "gpt-5", "prompt": "a"}'
# The context: a prompt longer than it (both lengths named), or max_tokens beyond it.
long="$(python3 -c 'print(" ".join(["word"] * 400))')"
expect 400 prompt $C "{\"prompt\": \"$long\"}"
grep -q "context is 256 tokens" "$work/body.json" || { echo "FAIL: lengths not named"; cat "$work/body.json"; exit 1; }
expect 400 max_tokens $C '{"prompt": "The Congress", "max_tokens": 256}'
# Other endpoints.
expect 400 tokens /detokenize '{"tokens": [-1]}'
expect 400 content /tokenize '{}'
expect 400 messages /apply-template '{"messages": []}'
# Messages OpenAI refuses: a user turn without content, a tool result without its call's id.
expect 400 messages /apply-template '{"messages": [{"role": "user", "content": null}]}'
grep -q "a user message needs a 'content'" "$work/body.json" || { echo "FAIL: content null"; cat "$work/body.json"; exit 1; }
expect 400 messages /apply-template '{"messages": [{"role": "user", "content": "a"}, {"role": "tool", "content": "r"}]}'
grep -q "tool_call_id" "$work/body.json" || { echo "FAIL: a tool message without tool_call_id"; cat "$work/body.json"; exit 1; }
# OpenAI's fields for what this server does not do: null is accepted (clients that send every
# field), a value is refused by name.
expect 400 prediction $C '{"prompt": "a", "prediction": {"type": "content", "content": "x"}}'
[ "$(post $C '{"prompt": "The", "max_tokens": 1, "prediction": null, "audio": null, "web_search_options": null}' "${auth[@]}")" = 200 ] ||
  { echo "FAIL: null OpenAI fields"; cat "$work/body.json"; exit 1; }

# A body over --max-body-bytes: 413.
python3 -c 'import json; print(json.dumps({"prompt": "x" * 100000}))' > "$work/big.json"
[ "$(post $C @"$work/big.json" "${auth[@]}")" = 413 ] || { echo "FAIL: a 100 kB body is not 413"; cat "$work/body.json"; exit 1; }
grep -q '"type":"request_too_large"' "$work/body.json" || { echo "FAIL: 413 body"; cat "$work/body.json"; exit 1; }
python3 -c 'import json; print(json.dumps({"prompt": "x" * 30000}))' > "$work/mid.json"  # under the limit
[ "$(post $C @"$work/mid.json" "${auth[@]}")" = 400 ] || { echo "FAIL: a 30 kB body"; cat "$work/body.json"; exit 1; }
# curl's default form encoding is read as the JSON it is, under the same limit (httplib alone
# capped form bodies at 8 KiB).
[ "$(curl -s -o "$work/body.json" -w '%{http_code}' "${auth[@]}" -X POST --data-binary @"$work/mid.json" "$base$C")" = 400 ] ||
  { echo "FAIL: a 30 kB form body"; cat "$work/body.json"; exit 1; }
grep -q "context_length_exceeded" "$work/body.json" || { echo "FAIL: a 30 kB form body was not read"; cat "$work/body.json"; exit 1; }
# A body shorter than its Content-Length: the read times out (--read-timeout 2) and the
# connection is closed without a 5xx.
status="$( (printf 'POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sekrit\r\nContent-Length: 100\r\n\r\n{"prompt": ' ; sleep 4) |
  timeout 10 python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.stdin.buffer.read())
s.settimeout(8)
data = s.recv(4096).decode(errors="replace")
print(data.split(" ")[1] if data else "closed")' "$port")"
case "$status" in 4*|closed) ;; *) echo "FAIL: a truncated body gave '$status'"; exit 1 ;; esac

# The limit holds for bodies of no declared length too: chunked.
[ "$(post $C @"$work/big.json" "${auth[@]}" -H 'Transfer-Encoding: chunked')" = 413 ] ||
  { echo "FAIL: a 100 kB chunked body is not 413"; cat "$work/body.json"; exit 1; }
# Framing (RFC 9112 §6): a request with neither Content-Length nor Transfer-Encoding has an empty
# body, answered at once (`curl -X POST` without data waited for the read timeout), whatever
# follows its headers; ambiguous framing is a 400 and a coding other than chunked a 501, each
# answered before the body is read, and the connection then ends.
raw() {  # raw BYTES (printf format) [LATER]: the statuses of the answers, or "closed"
  printf "$1" | timeout 20 python3 "$root/tests/scripts/raw_http.py" "$port" "${@:2}"
}
head="POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sekrit\r\n"
one='{"prompt": "a", "max_tokens": 1}'
check_raw() {  # check_raw WANT WHAT BYTES [LATER]
  got="$(raw "${@:3}")"
  [ "$got" = "$1" ] || { echo "FAIL: $2 gave '$got' (expected $1)"; tail -5 "$work/server.log"; exit 1; }
}
check_raw 400 "a body sent without a length" "${head}Connection: close\r\n\r\n$(printf 'x%.0s' {1..2000})"
check_raw 400 "two Content-Length headers that differ" "${head}Content-Length: 33\r\nContent-Length: 5\r\n\r\n$one"
check_raw 400 "Content-Length with Transfer-Encoding" "${head}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n21\r\n$one\r\n0\r\n\r\n"
check_raw 400 "a space before a header's colon" "${head}Content-Length : 33\r\n\r\n$one"
check_raw 501 "Transfer-Encoding gzip" "${head}Transfer-Encoding: gzip, chunked\r\n\r\n21\r\n$one\r\n0\r\n\r\n"
check_raw 200 "two equal Content-Length headers" "${head}Connection: close\r\nContent-Length: 33\r\nContent-Length: 33\r\n\r\n$one"
check_raw 400 "a GET with a body" "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 33\r\n\r\n$one"
start=$SECONDS
for path in /v1/responses/resp_none/cancel /v1/nowhere /v1/models; do  # a route, none, GET only
  code="$(curl -s -o "$work/body.json" -w '%{http_code}' "${auth[@]}" -X POST "$base$path")"
  case "$path:$code" in */cancel:404|/v1/nowhere:404|/v1/models:405) ;; *)
    echo "FAIL: POST $path without a body gave $code"; cat "$work/body.json"; exit 1 ;; esac
done
[ $((SECONDS - start)) -le 2 ] || { echo "FAIL: POSTs without a body were not answered at once"; exit 1; }
# After an ambiguous request nothing more is read from its connection: a request sent there
# later is never run.
check_raw 400 "a framing error, then a request on its connection" \
  "POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" \
  'GET /v1/smuggled HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sekrit\r\n\r\n'
sleep 0.5
! grep -q "/v1/smuggled" "$work/server.log" || { echo "FAIL: the request after a framing error was read"; exit 1; }
# So after a body over the limit: the answer is a 413 (not a reset), and nothing more is read.
xs="$(python3 -c 'print("x" * 600000, end="")')"
check_raw 413 "a chunked body over the limit, then a request on its connection" \
  "${head}Transfer-Encoding: chunked\r\n\r\n927c0\r\n${xs}\r\n0\r\n\r\n" \
  'GET /v1/after_too_large HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sekrit\r\n\r\n'
sleep 0.5
! grep -q "/v1/after_too_large" "$work/server.log" || { echo "FAIL: the request after a 413 was read"; exit 1; }
# A client that sends its request a byte at a time is cut off once --read-timeout (2 s) and the
# keep-alive wait (3 s) have passed, whatever the pace; the server keeps answering meanwhile.
drip() {  # drip SECONDS: sends a header a byte every 0.2 s; prints the seconds until the server cut it
  timeout 60 python3 - "$port" "$1" "$work/dripping" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
open(sys.argv[3], "w").close()
start = time.time()
while time.time() - start < float(sys.argv[2]):
    try:
        s.send(b"X")
    except OSError:
        break
    time.sleep(0.2)
print(round(time.time() - start))
PY
}
cut="$(drip 30)"
[ "$cut" -ge 4 ] && [ "$cut" -le 12 ] || { echo "FAIL: a dripping client was cut after $cut s (expected 5-6)"; exit 1; }
# Nor can a request hold more than its body's limit and a MiB of header: a flood of header lines
# (httplib keeps them all) is cut off before the server has read 100 MB of it.
sent="$(timeout 60 python3 - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(2)
sent = 0
try:
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")
    block = (b"X-Pad: " + b"p" * 1000 + b"\r\n") * 1000
    while sent < 100 << 20:
        s.sendall(block)
        sent += len(block)
except OSError:
    pass
print(sent >> 20)
PY
)"
[ "$sent" -lt 50 ] || { echo "FAIL: the server read $sent MB of header lines"; exit 1; }

# Routes and methods.
[ "$(curl -s -o "$work/body.json" -w '%{http_code}' "${auth[@]}" "$base/v2/nothing")" = 404 ] || { echo "FAIL: unknown route"; exit 1; }
grep -q '"error"' "$work/body.json" || { echo "FAIL: 404 body"; cat "$work/body.json"; exit 1; }
[ "$(curl -s -o "$work/body.json" -w '%{http_code}' "${auth[@]}" "$base$C")" = 405 ] || { echo "FAIL: GET $C is not 405"; cat "$work/body.json"; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" -X POST -d '{}' "$base/health")" = 405 ] || { echo "FAIL: POST /health"; exit 1; }

# Authentication: /health is open, everything else needs the key.
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" = 200 ] || { echo "FAIL: /health needs no key"; exit 1; }
for h in "" "Authorization: Bearer wrong" "Authorization: Bearer sekrit2" "Authorization: Basic sekrit"; do
  for path in /v1/models /metrics; do
    status="$(curl -s -o "$work/body.json" -w '%{http_code}' ${h:+-H "$h"} "$base$path")"
    [ "$status" = 401 ] || { echo "FAIL: '$h' on $path gave $status"; exit 1; }
  done
  [ "$(post $C '{"prompt": "a", "max_tokens": 2}' ${h:+-H "$h"})" = 401 ] || { echo "FAIL: '$h' completion"; exit 1; }
  grep -q '"authentication_error"' "$work/body.json" || { echo "FAIL: 401 body"; cat "$work/body.json"; exit 1; }
done
# Anthropic's clients send the key as x-api-key, and read errors in Anthropic's shape.
messages='{"max_tokens": 2, "messages": [{"role": "user", "content": "a"}]}'
[ "$(post /v1/messages "$messages" -H "x-api-key: wrong")" = 401 ] || { echo "FAIL: a wrong x-api-key"; exit 1; }
[ "$(json_get "$work/body.json" "['error']['type']")" = authentication_error ] && grep -q '"type":"error"' "$work/body.json" ||
  { echo "FAIL: the Messages API's 401 body"; cat "$work/body.json"; exit 1; }
# A user turn with no content is Anthropic's 400, read before the template (it once ended the server).
[ "$(post /v1/messages '{"max_tokens": 2, "messages": [{"role": "user", "content": []}]}' -H "x-api-key: sekrit")" = 400 ] &&
  grep -q "non-empty content" "$work/body.json" || { echo "FAIL: empty content"; cat "$work/body.json"; exit 1; }
# Past the key, this model (no chat template) gets a 400 saying so, in Anthropic's shape.
[ "$(post /v1/messages "$messages" -H "x-api-key: sekrit")" = 400 ] || { echo "FAIL: x-api-key"; cat "$work/body.json"; exit 1; }
[ "$(json_get "$work/body.json" "['error']['type']")" = invalid_request_error ] && grep -q "chat template" "$work/body.json" ||
  { echo "FAIL: the Messages API's 400 body"; cat "$work/body.json"; exit 1; }

# The Conversations API, and the routes of stored and background responses: hostile bodies and ids.
V=/v1/conversations
expect 400 items $V '{"items": "a"}'
expect 400 items $V "{\"items\": [$(python3 -c 'print(",".join(["{\"role\": \"user\", \"content\": \"a\"}"] * 21))')]}"
expect 400 items $V '{"items": [{"type": "input_image", "image_url": "x"}]}'
expect 400 items $V '{"items": [{"type": "reasoning", "encrypted_content": "forged"}]}'
expect 400 metadata $V '{"metadata": {"k": 5}}'
expect 400 metadata $V "{\"metadata\": $(python3 -c 'import json; print(json.dumps({str(i): "v" for i in range(17)}))')}"
expect 400 frobnicate $V '{"frobnicate": 1}'
expect 400 "" $V '[1]'
expect 404 "" $V/conv_nope/items '{"items": [{"role": "user", "content": "a"}]}'
expect 404 "" $V/conv_nope '{"metadata": {}}'
expect 404 "" /v1/responses/resp_nope/cancel '{}'
[ "$(post $V '{"items": [{"role": "user", "content": "a"}]}' "${auth[@]}")" = 200 ] || { echo "FAIL: a conversation"; cat "$work/body.json"; exit 1; }
conv="$(json_get "$work/body.json" "['id']")"
expect 400 items $V/$conv/items '{"items": []}'
expect 400 metadata $V/$conv '{}'
for path in "$V/conv_nope" "$V/$conv/items/msg_nope" "/v1/responses/resp_nope?stream=true&starting_after=-1"; do
  status="$(curl -s -o "$work/body.json" -w '%{http_code}' "${auth[@]}" "$base$path")"
  [ "$status" = 404 ] || { echo "FAIL: GET $path gave $status"; cat "$work/body.json"; exit 1; }
done
for query in "limit=0" "limit=x" "order=up" "after=msg_nope"; do
  status="$(curl -s -o "$work/body.json" -w '%{http_code}' "${auth[@]}" "$base$V/$conv/items?$query")"
  [ "$status" = 400 ] || { echo "FAIL: items ?$query gave $status"; cat "$work/body.json"; exit 1; }
done

# Still healthy and serving.
[ "$(post $C '{"prompt": "The Congress", "max_tokens": 4}' "${auth[@]}")" = 200 ] || { echo "FAIL: not serving after the errors"; cat "$work/body.json"; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" = 200 ] || { echo "FAIL: unhealthy"; exit 1; }
curl -s "${auth[@]}" "$base/metrics" > "$work/metrics.txt"
grep -q '^difftx_kv_blocks_used 0$' "$work/metrics.txt" || { echo "FAIL: KV blocks held after the errors"; exit 1; }
errors="$(server_errors)"
[ -z "$errors" ] || { echo "FAIL: a 5xx in the log"; echo "$errors"; exit 1; }
# A client still sending its request does not hold the server's exit.
rm -f "$work/dripping"
drip 30 > /dev/null &
dripper=$!
for _ in $(seq 1 100); do [ -e "$work/dripping" ] && break; sleep 0.1; done
[ -e "$work/dripping" ] || { echo "FAIL: the dripping client did not connect"; exit 1; }
started=$SECONDS
stop_server
[ $((SECONDS - started)) -le 5 ] || { echo "FAIL: SIGTERM took $((SECONDS - started)) s with a client dripping"; exit 1; }
wait "$dripper" || true

# An error message keeps what follows a NUL of the request.
start_server --max-queue 1 --max-running 1
[ "$(curl -s -o "$work/body.json" -w '%{http_code}' "$base/v1/models/%00abc")" = 404 ] || { echo "FAIL: NUL model"; exit 1; }
grep -q 'u0000abc' "$work/body.json" || { echo "FAIL: the message stops at the NUL"; cat "$work/body.json"; exit 1; }
# More choices than the engine holds at once can never run: a 400 naming n, not a 503 to retry.
[ "$(post $C '{"prompt": "a", "max_tokens": 1, "n": 3}')" = 400 ] || { echo "FAIL: n past the queue"; cat "$work/body.json"; exit 1; }
grep -q '"param":"n"' "$work/body.json" || { echo "FAIL: n past the queue names no n"; cat "$work/body.json"; exit 1; }
[ "$(post $C '{"prompt": "a", "max_tokens": 1, "n": 2}')" = 200 ] || { echo "FAIL: n = 2 fits"; cat "$work/body.json"; exit 1; }
stop_server
echo "PASS"
