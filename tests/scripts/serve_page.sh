# The chat page (GET /) in headless Chromium against difftx serve: ?send= sends a message on
# load; the reply streams in through fetch + server-sent events, and the page ends showing the
# continuation, the tokens/s and status "done": in completion mode when the model has no
# template, in chat mode when it has one.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
chromium="${DIFFTX_CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || { echo "SKIP: $chromium is missing (scripts/setup installs Debian's chromium)"; exit 77; }
make_serve_model

# page_check QUERY MODE PREFIX: Chromium shows the page with QUERY (?send=...), DevTools
# (cdp_wait.py) waits for the status "done" and reads what the page shows: the mode, a reply that
# starts with PREFIX and came in several chunks, the tokens/s.
page_check() {
  local cdp_port chromium_pid probe
  cdp_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --disable-quic --user-data-dir="$(mktemp -d "$work/profile.XXXXXX")" \
    --remote-debugging-port="$cdp_port" "$base/?$1" 2>> "$work/chromium.log" &
  chromium_pid=$!
  probe='(() => { const s = document.getElementById("status").textContent;
    if (s === "generating" || s === "idle") return null;
    const replies = [...document.querySelectorAll(".msg.assistant")];
    return { status: s, rate: document.getElementById("rate").textContent,
             mode: document.getElementById("mode-completion").checked ? "completion" : "chat",
             replies: replies.map((d) => d.textContent), chunks: replies.map((d) => Number(d.dataset.chunks || 0)) }; })()'
  python3 "$root/tests/scripts/cdp_wait.py" "$cdp_port" "$probe" 60 > "$work/page.json" ||
    { echo "FAIL: the page never finished"; cat "$work/page.json"; kill "$chromium_pid"; exit 1; }
  kill "$chromium_pid"; wait "$chromium_pid" 2>/dev/null || true
  python3 - "$work/page.json" "$2" "$3" <<'PY' || { echo "FAIL: the page did not show a streamed reply"; cat "$work/page.json"; exit 1; }
import json, re, sys
page, mode, prefix = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert page["status"] == "done", page
assert re.search(r"\d+ tokens, [\d.]+ tok/s", page["rate"]), page
assert page["mode"] == mode, page
reply = page["replies"][0]
assert reply.startswith(prefix) and len(reply) > len(prefix), page
assert page["chunks"][0] > 1, page  # streamed, not in one piece
print("page (%s): %r | %d chunks | %s" % (mode, reply[:60], page["chunks"][0], page["rate"]))
PY
}

# No chat template: completion mode, the reply continues the text.
start_server --log-format json
page_check "send=The%20Congress&max_tokens=24" completion "The Congress"
grep -q '"path":"/v1/completions","prompt_tokens":[0-9]*,"remote":"[^"]*","status":200' "$work/server.log" ||
  { echo "FAIL: the page's request is not in the log"; cat "$work/server.log"; exit 1; }
stop_server
# With one: chat mode, through /v1/chat/completions.
start_server --log-format json --chat-template "$root/tests/fixtures/serve/chatml.jinja"
page_check "send=Hello&max_tokens=24" chat ""
grep -q '"path":"/v1/chat/completions","prompt_tokens":[0-9]*,"remote":"[^"]*","status":200' "$work/server.log" ||
  { echo "FAIL: the page's chat request is not in the log"; cat "$work/server.log"; exit 1; }
stop_server
echo "PASS"
