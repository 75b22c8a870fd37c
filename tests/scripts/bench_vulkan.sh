# `difftx bench vulkan --copy-only` on the Vulkan device (lavapipe in CI; skipped without one): the
# copy row gives the copy command's and a shader's rates, and copy_gbs, the denominator of the
# GPU bars ("of_copy"), is the better of the two, so a driver's slow copy command cannot inflate
# a kernel's fraction of the bandwidth. --copy-only reads no model config (from any directory).
source "$(dirname "$0")/lib.bash"
cd "$work"
"$difftx" --version | grep -q "^vulkan:0 " || { echo "SKIP: no Vulkan device"; exit 77; }
"$difftx" bench vulkan --device vulkan:0 --copy-only --copy-mib 8 --rounds 1 --json > "$work/rows.jsonl" \
  2> "$work/err.txt" || { echo "FAIL: bench vulkan --copy-only"; cat "$work/err.txt"; exit 1; }
python3 - "$work/rows.jsonl" <<'PY' || exit 1
import json, sys
rows = {r["op"]: r for r in map(json.loads, open(sys.argv[1]))}
if sorted(rows) != ["copy", "device", "dispatch"]:
    sys.exit(f"FAIL: rows {sorted(rows)}")
c = rows["copy"]
if c["mib"] != 8 or not (c["command_gbs"] > 0 and c["shader_gbs"] > 0):
    sys.exit(f"FAIL: copy row {c}")
if c["copy_gbs"] != max(c["command_gbs"], c["shader_gbs"]):
    sys.exit(f"FAIL: copy_gbs is not the better rate: {c}")
PY
"$difftx" bench vulkan --device vulkan:0 --copy-only --copy-mib 0 > /dev/null 2> "$work/err.txt" &&
  { echo "FAIL: --copy-mib 0 accepted"; exit 1; }
grep -q "copy-mib" "$work/err.txt" || { echo "FAIL: --copy-mib 0 error does not name it"; cat "$work/err.txt"; exit 1; }
# The stream's first-submit size for A/B runs (bench/gpu/run.sh's profile stage): a bad value is an
# error naming the variable, never a silent default.
DIFFTX_VULKAN_FIRST_SUBMIT=256 "$difftx" bench vulkan --device vulkan:0 --copy-only --copy-mib 8 --rounds 1 \
  > /dev/null 2> "$work/err.txt" || { echo "FAIL: DIFFTX_VULKAN_FIRST_SUBMIT=256"; cat "$work/err.txt"; exit 1; }
for bad in 0 257 x 16x; do
  DIFFTX_VULKAN_FIRST_SUBMIT="$bad" "$difftx" bench vulkan --device vulkan:0 --copy-only --copy-mib 8 \
    > /dev/null 2> "$work/err.txt" && { echo "FAIL: DIFFTX_VULKAN_FIRST_SUBMIT=$bad accepted"; exit 1; }
  grep -q "DIFFTX_VULKAN_FIRST_SUBMIT='$bad'" "$work/err.txt" ||
    { echo "FAIL: DIFFTX_VULKAN_FIRST_SUBMIT=$bad error"; cat "$work/err.txt"; exit 1; }
done
echo "PASS"
