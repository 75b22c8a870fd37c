# `difftx bench train` end to end with its PyTorch peer on the tiny preset: the peer must pass
# its check against tools/oracle (loss and every gradient, every variant) and time each variant,
# and the bench must join its figures to its own. No timing is asserted (benchmarks do that).
source "$(dirname "$0")/lib.bash"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 has no torch (scripts/setup --oracle installs python3-torch)"
  exit 77
fi
"$difftx" bench train --preset tiny --seq-len 32 --micro-batch 2 --rounds 1 --quick --torch-threads 1 --json \
  > "$work/out.jsonl" 2>&1 || { cat "$work/out.jsonl"; exit 1; }
for variant in baseline diff diff2; do
  row="$(grep '"op":"train_step"' "$work/out.jsonl" | grep "\"variant\":\"$variant\"")" ||
    { echo "FAIL: no train_step row for $variant"; cat "$work/out.jsonl"; exit 1; }
  if echo "$row" | grep -q '"torch_tok_s":0[,}]'; then
    echo "FAIL: the PyTorch peer gave no figure for $variant"; cat "$work/out.jsonl"; exit 1
  fi
done
grep -q '"what":"diff_step_over_baseline"' "$work/out.jsonl" || { echo "FAIL: no diff/baseline ratio"; exit 1; }
echo "PASS"
