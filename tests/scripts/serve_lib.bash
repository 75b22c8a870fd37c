# Shared by the serve_*.sh script tests (sourced after lib.bash): a tiny trained model, a
# `difftx serve` on a free loopback port that is always killed on exit, and HTTP helpers.
command -v curl >/dev/null || { echo "SKIP: curl is missing (scripts/setup installs it)"; exit 77; }
server_pid=""
trap 'if [ -n "$server_pid" ]; then kill -9 "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT

# A 2-layer DIFF V2 model trained for 30 steps on the small corpus: $model.
make_serve_model() {
  prepare_small_corpus
  "$difftx" train --config "$root/tests/fixtures/train/diff2.json" --data "$work/data" --out "$work/run" \
    --steps 30 --seq-len 64 --micro-batch 8 --lr 1e-2 --warmup 5 --eval-every 0 --checkpoint-every 0 --quiet \
    > "$work/train.txt"
  model="$work/run/checkpoints/step_00000030"
}

# start_server [OPTIONS...]: serve $model on a free port ($port, $base) and wait until /health is 200.
# The device the server and the commands it is compared with run on: $DIFFTX_TEST_DEVICE (a
# ctest entry runs a script again with vulkan), skipping when this machine has no such device.
device_args=(--device "${DIFFTX_TEST_DEVICE:-cpu}")
if [ "${DIFFTX_TEST_DEVICE:-cpu}" != cpu ] && ! "$difftx" --version | grep -q "^${DIFFTX_TEST_DEVICE}[: ]"; then
  echo "SKIPPED: no ${DIFFTX_TEST_DEVICE} device here"; exit 77
fi

start_server() {
  : > "$work/server.log"
  "$difftx" serve --model "$model" --port 0 "${device_args[@]}" "$@" 2> "$work/server.log" &
  server_pid=$!
  local i
  for i in $(seq 1 300); do
    port="$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/server.log")"
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || { echo "FAIL: the server exited"; cat "$work/server.log"; exit 1; }
    sleep 0.1
  done
  [ -n "$port" ] || { echo "FAIL: no 'listening on' line"; cat "$work/server.log"; exit 1; }
  base="http://127.0.0.1:$port"
  for i in $(seq 1 600); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" = 200 ] && return 0
    kill -0 "$server_pid" 2>/dev/null || { echo "FAIL: the server exited"; cat "$work/server.log"; exit 1; }
    sleep 0.1
  done
  echo "FAIL: /health never became 200"; cat "$work/server.log"; exit 1
}

# server_errors: the log's 5xx request lines, less /health's 503s (its documented answer while the
# model loads, which start_server's polls get; the tests check /health's status themselves) and
# 501s (a transfer coding other than chunked, RFC 9112's answer, which serve_errors.sh asks for).
server_errors() {
  grep -E '^[A-Z]+ [^ ]+ 5[0-9]{2} [|]' "$work/server.log" | grep -vE '^GET /health 503 [|]|^[A-Z]+ [^ ]+ 501 [|]' || true
}

# stop_server: SIGTERM, which must end the server with status 0.
stop_server() {
  kill -TERM "$server_pid"
  local status=0
  wait "$server_pid" || status=$?
  server_pid=""
  [ "$status" = 0 ] || { echo "FAIL: the server exited with $status after SIGTERM"; tail -20 "$work/server.log"; exit 1; }
}

# post PATH JSON [CURL OPTIONS...]: the body to $work/body.json, the status to stdout.
post() {
  local path="$1" data="$2"; shift 2
  curl -s -o "$work/body.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data-binary "$data" "$@" "$base$path"
}

# A metric's value from /metrics (0 when absent).
metric() {
  local v
  v="$(curl -s "$base/metrics" | sed -n "s/^$1 \(.*\)/\1/p")"
  echo "${v:-0}"
}

# json_get FILE EXPR: a value from a JSON file (python3, e.g. "['choices'][0]['text']").
json_get() {
  python3 -c "import json,sys; v=json.load(open(sys.argv[1]))$2; print(v if isinstance(v, str) else json.dumps(v))" "$1"
}

# The openai npm client (tools/serve_client, pinned by its lockfile), installed once into
# build/serve_client with npm ci: $client_dir. Skips (77) without node or the npm registry.
install_serve_client() {
  command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node and npm are missing"; exit 77; }
  client_dir="$root/build/serve_client"
  if ! cmp -s "$root/tools/serve_client/package-lock.json" "$client_dir/package-lock.json" ||
     [ ! -d "$client_dir/node_modules/openai" ]; then
    rm -rf "$client_dir"
    mkdir -p "$client_dir"
    cp "$root/tools/serve_client/package.json" "$root/tools/serve_client/package-lock.json" "$client_dir/"
    (cd "$client_dir" && npm ci --silent --no-audit --no-fund > npm.log 2>&1) ||
      { echo "SKIP: npm ci of tools/serve_client failed (no registry?)"; cat "$client_dir/npm.log"; rm -rf "$client_dir"; exit 77; }
  fi
  cp "$root"/tools/serve_client/*.mjs "$client_dir/"
}
