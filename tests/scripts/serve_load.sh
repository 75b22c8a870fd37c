# A bounded load test of difftx serve on loopback (tools/serve_client/load.mjs): concurrent
# openai clients with random lengths, random mid-stream aborts and bad requests, against a small
# queue so that some requests are refused with 503. No other 5xx, no crash, and afterwards no
# sequence running and every KV block free. CI runs 8 clients for 10 s; the figures in
# docs/BENCHMARKS.md come from DIFFTX_LOAD_CLIENTS=64 DIFFTX_LOAD_SECONDS=60.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
clients="${DIFFTX_LOAD_CLIENTS:-8}"
seconds="${DIFFTX_LOAD_SECONDS:-10}"
install_serve_client
make_serve_model
start_server --max-running "$(( clients / 2 > 0 ? clients / 2 : 1 ))" --max-queue "$(( clients / 4 ))" --max-connections $(( clients * 2 + 8 ))
node "$client_dir/load.mjs" "$base/v1" "$clients" "$seconds" > "$work/summary.json" 2>&1 ||
  { echo "FAIL: the load test"; cat "$work/summary.json"; tail -20 "$work/server.log"; exit 1; }
echo "load: $(cat "$work/summary.json")"
for i in $(seq 1 100); do [ "$(metric difftx_running_sequences)" = 0 ] && [ "$(metric difftx_kv_blocks_used)" = 0 ] && break; sleep 0.1; done
[ "$(metric difftx_running_sequences)" = 0 ] || { echo "FAIL: sequences still running"; exit 1; }
[ "$(metric difftx_kv_blocks_used)" = 0 ] || { echo "FAIL: $(metric difftx_kv_blocks_used) KV blocks held after the load"; exit 1; }
[ "$(metric difftx_queue_length)" = 0 ] || { echo "FAIL: requests left in the queue"; exit 1; }
errors="$(server_errors | grep -vE ' 503 [|]' || true)"
[ -z "$errors" ] || { echo "FAIL: a 5xx other than 503 (busy)"; echo "$errors" | head; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" = 200 ] || { echo "FAIL: unhealthy after the load"; exit 1; }
stop_server
echo "PASS"
