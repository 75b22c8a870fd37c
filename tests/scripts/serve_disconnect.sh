# difftx serve under clients that go away and signals: a client that disconnects mid-stream, or
# gives up waiting for a whole reply, cancels its sequences and frees their KV blocks (/metrics) and
# is logged as 499; SIGTERM with a stream in flight
# ends it (an error event, then [DONE]) within the grace period and exits 0; a second SIGTERM
# while idle exits 0 too. A random-weight model with a long context keeps streams running.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
make_serve_model
cat > "$work/long.json" <<'JSON'
{"model_type": "difftx", "attention": "diff2", "vocab_size": 512, "hidden_size": 256, "num_hidden_layers": 4,
 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 704,
 "max_position_embeddings": 8192, "rope_theta": 10000.0, "rope_style": "interleaved", "rms_norm_eps": 1e-05,
 "tie_word_embeddings": true, "lambda_init": "exp", "diff_subln": true}
JSON
"$difftx" init --config "$work/long.json" --out "$work/long" > /dev/null
cp "$model"/tokenizer.* "$work/long/"
model="$work/long"
start_server --grace 1

stream() {  # stream N: a streamed request for N choices of up to 8000 tokens, its events to stdout
  exec curl -s -N -X POST -H "Content-Type: application/json" "$base/v1/completions" \
    --data "{\"prompt\": \"The Congress\", \"max_tokens\": 8000, \"n\": $1, \"temperature\": 0, \"stream\": true}"
}
wait_metric() {  # wait_metric NAME VALUE: within 10 s
  local i
  for i in $(seq 1 100); do [ "$(metric "$1")" = "$2" ] && return 0; sleep 0.1; done
  echo "FAIL: $1 is $(metric "$1"), expected $2"; curl -s "$base/metrics" | grep difftx_; exit 1
}

# Disconnect mid-stream: the sequences are cancelled and every KV block is freed.
stream 4 > "$work/cut.txt" &
curl_pid=$!
for i in $(seq 1 100); do [ "$(metric difftx_running_sequences)" != 0 ] && break; sleep 0.05; done
[ "$(metric difftx_running_sequences)" != 0 ] || { echo "FAIL: the stream never ran"; exit 1; }
[ "$(metric difftx_kv_blocks_used)" != 0 ] || { echo "FAIL: a running stream holds no KV blocks"; exit 1; }
sleep 0.3
kill "$curl_pid"; wait "$curl_pid" 2>/dev/null || true
wait_metric difftx_running_sequences 0
wait_metric difftx_kv_blocks_used 0
cancelled="$(metric 'difftx_sequences_finished_total{reason="cancelled"}')"
[ "$cancelled" -ge 1 ] || { echo "FAIL: no sequence was cancelled"; curl -s "$base/metrics" | grep finished; exit 1; }
grep -q "^data: " "$work/cut.txt" || { echo "FAIL: nothing streamed before the disconnect"; exit 1; }
for i in $(seq 1 100); do grep -q "^POST /v1/completions " "$work/server.log" && break; sleep 0.1; done
grep -q "^POST /v1/completions 499 " "$work/server.log" ||
  { echo "FAIL: the stream whose client left is not logged as 499"; grep "^POST" "$work/server.log"; exit 1; }
echo "disconnect: $cancelled sequences cancelled, KV blocks back to 0"

# A non-streamed request whose client gives up (a timeout, as the openai SDK's before a retry) is
# cancelled too, well before its 4 x 8000 tokens are made.
curl -s -o /dev/null -m 1.5 -X POST -H "Content-Type: application/json" "$base/v1/completions" \
  --data '{"prompt": "The Congress", "max_tokens": 8000, "n": 4, "temperature": 0}' || true
wait_metric difftx_running_sequences 0
wait_metric difftx_kv_blocks_used 0
now="$(metric 'difftx_sequences_finished_total{reason="cancelled"}')"
[ "$now" -ge $(( cancelled + 4 )) ] || { echo "FAIL: a non-streamed request's client left and $(( now - cancelled )) of its 4 sequences were cancelled"; exit 1; }
grep -q "POST /v1/completions 499" "$work/server.log" || { echo "FAIL: no 499 logged for the client that left"; tail "$work/server.log"; exit 1; }
echo "non-streamed disconnect: its 4 sequences cancelled"

# SIGTERM with a stream in flight: the stream ends with an error event and [DONE] after the
# 1 s grace, new requests are refused meanwhile, and the exit status is 0.
stream 1 > "$work/term.txt" &
curl_pid=$!
for i in $(seq 1 100); do [ "$(metric difftx_running_sequences)" != 0 ] && break; sleep 0.05; done
start=$(date +%s)
kill -TERM "$server_pid"
sleep 0.3
status="$(curl -s -o /dev/null -w '%{http_code}' "$base/health" || true)"
[ "$status" = 503 ] || { echo "FAIL: /health during shutdown gave $status"; exit 1; }
status=0
wait "$server_pid" || status=$?
server_pid=""
[ "$status" = 0 ] || { echo "FAIL: exit status $status after SIGTERM"; tail "$work/server.log"; exit 1; }
[ $(( $(date +%s) - start )) -le 6 ] || { echo "FAIL: shutdown took over 6 s with a 1 s grace"; exit 1; }
wait "$curl_pid" || true
tail -c 300 "$work/term.txt" | grep -q '"error"' || { echo "FAIL: no error event at shutdown"; tail -c 500 "$work/term.txt"; exit 1; }
tail -c 20 "$work/term.txt" | grep -q 'data: \[DONE\]' || { echo "FAIL: no [DONE] at shutdown"; tail -c 500 "$work/term.txt"; exit 1; }

# SIGINT while idle: exits 0 at once.
start_server
kill -INT "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
[ "$status" = 0 ] || { echo "FAIL: exit status $status after SIGINT"; exit 1; }
echo "PASS"
