# The chat page (GET /) in headless Chromium against difftx serve: ?send= sends a message on
# load; the reply streams in through fetch + server-sent events, and the page ends showing the
# continuation, the tokens/s and status "done" (in completion mode: the model has no template).
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
chromium="${DIFFTX_CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || { echo "SKIP: $chromium is missing (scripts/setup installs Debian's chromium)"; exit 77; }
make_serve_model
start_server --log-format json

# Chromium shows the page with ?send=, and DevTools (cdp_wait.py) waits for the status "done" and
# reads what the page shows.
cdp_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --disable-quic --user-data-dir="$(mktemp -d "$work/profile.XXXXXX")" \
  --remote-debugging-port="$cdp_port" "$base/?send=The%20Congress&max_tokens=24" 2> "$work/chromium.log" &
chromium_pid=$!
probe='(() => { const s = document.getElementById("status").textContent;
  if (s === "generating" || s === "idle") return null;
  return { status: s, rate: document.getElementById("rate").textContent,
           mode: document.getElementById("mode-completion").checked ? "completion" : "chat",
           replies: [...document.querySelectorAll(".msg.assistant")].map((d) => d.textContent) }; })()'
python3 "$root/tests/scripts/cdp_wait.py" "$cdp_port" "$probe" 60 > "$work/page.json" ||
  { echo "FAIL: the page never finished"; cat "$work/page.json"; kill "$chromium_pid"; exit 1; }
kill "$chromium_pid"; wait "$chromium_pid" 2>/dev/null || true
python3 - "$work/page.json" <<'PY' || { echo "FAIL: the page did not show a streamed reply"; cat "$work/page.json"; exit 1; }
import json, re, sys
page = json.load(open(sys.argv[1]))
assert page["status"] == "done", page
assert re.search(r"\d+ tokens, [\d.]+ tok/s", page["rate"]), page
assert page["mode"] == "completion", page
reply = page["replies"][0]
assert reply.startswith("The Congress") and len(reply) > len("The Congress"), page
print("page: %r | %s" % (reply[:80], page["rate"]))
PY
grep -q '"path":"/v1/completions","prompt_tokens":[0-9]*,"remote":"[^"]*","status":200' "$work/server.log" ||
  { echo "FAIL: the page's request is not in the log"; cat "$work/server.log"; exit 1; }
stop_server
echo "PASS"
