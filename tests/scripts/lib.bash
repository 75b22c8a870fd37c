# Shared setup for script tests: sourced, not run (run by ctest as: bash TEST.sh DIFFTX REPO).
set -euo pipefail
difftx="$1"
root="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A small real corpus (State of the Union addresses of the 1900s) with a trained 512-token
# vocabulary: enough text for a tiny model to learn from in seconds.
prepare_small_corpus() {
  if ! ls "$root"/data/sotu/19[0-4]*.txt >/dev/null 2>&1; then
    echo "SKIP: $root/data/sotu is missing (run scripts/setup)"
    exit 77
  fi
  mkdir -p "$work/corpus"
  cp "$root"/data/sotu/19[0-4]*.txt "$work/corpus/"
  "$difftx" prepare --corpus "$work/corpus" --vocab-size 512 --out "$work/data" --quiet
}

# The command must fail and print (stdout or stderr) the given part of its message.
expect_error() {  # expect_error "message part" command...
  local want="$1"; shift
  if "$@" > "$work/out.txt" 2>&1; then echo "FAIL: '$*' succeeded"; exit 1; fi
  grep -qF -- "$want" "$work/out.txt" || { echo "FAIL: expected '$want' in:"; cat "$work/out.txt"; exit 1; }
}

# The file must hold every one of the given texts.
expect_in() {  # expect_in FILE "text"...
  local file="$1"; shift
  for want in "$@"; do
    grep -qF -- "$want" "$file" || { echo "FAIL: no '$want' in $file:"; head -c 2000 "$file"; exit 1; }
  done
}

# Training lines written so far to a metrics.jsonl (0 while it does not exist).
train_lines() {
  local n
  n="$(grep -c '"loss"' "$1" 2>/dev/null)" || true
  echo "${n:-0}"
}

# "step loss grad_norm" of every training line, and "step val_loss" of every eval line.
loss_trajectory() {
  sed -n 's/.*"grad_norm":\([^,]*\),"loss":\([^,]*\),.*"step":\([0-9]*\),.*/\3 \2 \1/p' "$1"
  sed -n 's/{"step":\([0-9]*\),"val_loss":\([^}]*\)}/\1 val \2/p' "$1"
}
