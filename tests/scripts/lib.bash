# Shared setup for script tests: sourced, not run (run by ctest as: bash TEST.sh DIFFTX REPO).
set -euo pipefail
difftx="$1"
root="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# python3 is the interpreter that PATH's python3 runs, found once: where that is a pyenv shim (as on
# the CI machines), each call through it starts some twenty processes, 0.5 s of CPU, and some
# tests call python3 once per request.
if python3_path="$(python3 -c 'import sys; print(sys.executable)' 2> /dev/null)" && [ -x "$python3_path" ]; then
  python3() { "$python3_path" "$@"; }
fi

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
  [[ "$(< "$work/out.txt")" == *"$want"* ]] || { echo "FAIL: expected '$want' in:"; cat "$work/out.txt"; exit 1; }
}

# The file must hold every one of the given texts.
expect_in() {  # expect_in FILE "text"...
  local file="$1"; shift
  for want in "$@"; do
    grep -qF -- "$want" "$file" || { echo "FAIL: no '$want' in $file:"; head -c 2000 "$file"; exit 1; }
  done
}

# Runs Python statements on the float32 logits of two .npy files, as the tuples a and b.
check_logits() {  # check_logits A.npy B.npy 'statements'
  python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
def floats(path):
    raw = open(path, "rb").read()
    header = struct.unpack("<H", raw[8:10])[0]
    data = raw[10 + header:]
    return struct.unpack("<%df" % (len(data) // 4), data)
a, b = floats(sys.argv[1]), floats(sys.argv[2])
exec(sys.argv[3])
PY
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

# Data-parallel tests: skip (77) where Open MPI or difftx's MPI plugin is missing; mpirun may
# run as root (CI does).
require_mpi() {
  command -v mpirun >/dev/null || { echo "SKIP: mpirun is missing (install openmpi-bin)"; exit 77; }
  [ -f "$(dirname "$difftx")/libdifftx_mpi.so" ] ||
    { echo "SKIP: $(dirname "$difftx")/libdifftx_mpi.so was not built (install libopenmpi-dev)"; exit 77; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

# mpirun on this host: one thread per rank, more ranks than cores allowed, waiting ranks yield
# the CPU instead of spinning (tests share the cores), and no single-copy shared memory
# (containers often forbid the ptrace it needs).
mpi_run() {
  mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl_vader_single_copy_mechanism none \
    -x OMP_NUM_THREADS=1 "$@"
}

# metrics_match A.jsonl B.jsonl LOSS_RTOL GNORM_RTOL [FIRST_STEP]: same windows in every step,
# losses and gradient norms within relative tolerances (tests/scripts/metrics_match.py).
metrics_match() {
  python3 "$root/tests/scripts/metrics_match.py" "$@"
}

abi_version() {  # abi_version difftx.h: the SONAME's version (cmake/package.cmake): MAJOR, or MAJOR.MINOR while MAJOR is 0
  local major minor
  major="$(sed -n 's/^#define DIFFTX_VERSION_MAJOR \([0-9]*\)$/\1/p' "$1")"
  minor="$(sed -n 's/^#define DIFFTX_VERSION_MINOR \([0-9]*\)$/\1/p' "$1")"
  if [ "$major" = 0 ]; then echo "0.$minor"; else echo "$major"; fi
}
