# `difftx bench serve` on the Motif fixture: its setup row and every result row name the device
# they ran on (JSON lines and text), on the CPU and on the Vulkan device where this machine has one
# (lavapipe in CI), as `bench infer`'s setup does: rows are read alone (grep '"serve_bench"', the
# GPU runner's tagged lines), so each must say where it was measured.
source "$(dirname "$0")/lib.bash"
model="$root/tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer"
devices=(cpu)
"$difftx" --version | grep -q "^vulkan:0 " && devices+=(vulkan:0)
for device in "${devices[@]}"; do
  if [ "$device" = cpu ]; then
    want="cpu ($("$difftx" --version | sed -n 's/^cpu level: \([a-z0-9_]*\).*/\1/p'))"
  else
    want="$("$difftx" --version | sed -n 's/^vulkan:0 \(.*\): [0-9.]* [GM]iB,.*/\1/p')"
  fi
  bench=("$difftx" bench serve --model "$model" --device "$device" --concurrency 1,2 --prompt 8 --new 4)
  "${bench[@]}" --json > "$work/rows.jsonl" 2> "$work/err.txt" ||
    { echo "FAIL: bench serve --device $device"; cat "$work/err.txt"; exit 1; }
  python3 - "$work/rows.jsonl" "$want" <<'PY' || exit 1
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
ops = [r["op"] for r in rows]
if ops != ["setup", "serve_bench", "serve_bench"]:
    sys.exit(f"FAIL: rows {ops}")
for r in rows:
    if r.get("device") != sys.argv[2]:
        sys.exit(f"FAIL: {r['op']} row's device {r.get('device')!r}, not {sys.argv[2]!r}: {r}")
PY
  "${bench[@]}" > "$work/rows.txt" 2> /dev/null
  [ "$(grep -c "^op=[a-z_]*  device=$want  " "$work/rows.txt")" = 3 ] ||
    { echo "FAIL: text rows without 'device=$want'"; cat "$work/rows.txt"; exit 1; }
  echo "ok: $device: $want"
done
echo "PASS"
