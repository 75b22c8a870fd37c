# The official openai npm client (tools/serve_client/api_check.mjs) against difftx serve:
# completions and chat completions, whole and streamed, seeded choices, logprobs, usage and
# typed errors; the chat template comes from --chat-template.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/serve_lib.bash"
install_serve_client
make_serve_model
start_server --chat-template "$root/tests/fixtures/serve/chatml.jinja"
node "$client_dir/api_check.mjs" "$base/v1" || { echo "FAIL: the openai client check"; tail -20 "$work/server.log"; exit 1; }
stop_server
echo "PASS"
