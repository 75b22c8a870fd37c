# The dispatched binary keeps each CPU level's code to itself (docs/ARCHITECTURE.md "CPU levels"):
# every function that uses instructions beyond the x86-64-v2 baseline (VEX/EVEX encodings, ymm, zmm
# or mask registers, BMI) belongs to a level namespace (difftx::isa_avx2, difftx::isa_avx512), so a
# CPU without AVX2 never executes one through the baseline code. The hazard it guards against: an
# inline function or template instantiated in both a level's sources and the baseline, whose
# level copy the linker kept. Also: no symbol was compiled with DIFFTX_ISA undefined.
source "$(dirname "$0")/lib.bash"
command -v objdump > /dev/null || { echo "SKIP: objdump is missing (binutils)"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: an x86-64 check"; exit 77; }
objdump -d --no-show-raw-insn -C "$difftx" > "$work/asm.txt"
grep -q "difftx::isa_avx2::" "$work/asm.txt" || { echo "SKIP: not a dispatched build (DIFFTX_NATIVE=ON)"; exit 77; }

if grep -q "DIFFTX_ISA" "$work/asm.txt"; then
  echo "FAIL: symbols compiled without DIFFTX_ISA defined (a per-level source lacks kernels/isa.h):"
  grep -o "<[^>]*DIFFTX_ISA[^>]*>" "$work/asm.txt" | sort -u | head
  exit 1
fi

# tzcnt is left out: baseline code may hold it as `rep bsf` (GCC's generic tuning), which older
# CPUs execute as bsf.
awk '
  /^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<") + 1); fn = substr(fn, 1, length(fn) - 2); next }
  /^ *[0-9a-f]+:\t/ {
    if (fn ~ /::isa_avx(2|512)::/) next
    split($0, parts, "\t"); insn = parts[2]
    if (insn ~ /%[yz]mm|%k[0-7]/ || insn ~ /^(v[a-z0-9]+|shlx|shrx|sarx|rorx|andn|bextr|blsi|blsr|blsmsk|bzhi|pdep|pext|mulx|lzcnt|movbe|kmov[a-z]*)( |$)/) {
      if (!(fn in seen)) { seen[fn] = insn; order[++n] = fn }
    }
  }
  END {
    for (i = 1; i <= n; ++i) printf "%s\n    first: %s\n", order[i], seen[order[i]]
    exit n > 0
  }' "$work/asm.txt" > "$work/offenders.txt" || {
  echo "FAIL: functions outside the level namespaces use instructions beyond x86-64-v2:"
  head -40 "$work/offenders.txt"
  exit 1
}
echo "ok: $(grep -c ">:$" "$work/asm.txt") functions checked"
