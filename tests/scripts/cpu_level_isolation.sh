# The dispatched binary keeps each CPU level's code to itself (docs/ARCHITECTURE.md "CPU levels"):
# every function that uses instructions beyond the x86-64-v2 baseline (VEX/EVEX encodings, ymm, zmm
# or mask registers, BMI) belongs to a level namespace (difftx::kernels::isa_<level>: avx2, avxvnni, avx512f, avx512),
# so a CPU without AVX2 never executes one through the baseline code. The hazard it guards against:
# an inline function or template instantiated in both a level's sources and the baseline, whose
# level copy the linker kept. Also: no symbol was compiled with DIFFTX_ISA undefined; the avxvnni
# level uses no AVX-512 (EVEX encodings, zmm, mask or ymm16-31 registers: its CPUs have none), and
# its int8 kernels (the row dots' Q8_0Dots, Q4_0Dots, Q4_KDots; the GEMM's tile or gemm_spans for
# WeightType 3, 4, 5: Q8_0, Q4_0, Q4_K) use AVX-VNNI's {vex} vpdpbusd and no vpmaddubsw; the
# avx512f level uses no VNNI (Skylake-X has none); and no level uses AVX-512 BF16, which no
# level's CPU check asks for.
source "$(dirname "$0")/lib.bash"
command -v objdump > /dev/null || { echo "SKIP: objdump is missing (binutils)"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: an x86-64 check"; exit 77; }
objdump -d --insn-width=16 -C "$difftx" > "$work/asm.txt"
grep -q "difftx::kernels::isa_avx2::" "$work/asm.txt" ||
  { echo "SKIP: not a dispatched build (DIFFTX_NATIVE=ON)"; exit 77; }

if grep -q "DIFFTX_ISA" "$work/asm.txt"; then
  echo "FAIL: symbols compiled without DIFFTX_ISA defined (a per-level source lacks kernels/isa.h):"
  grep -o "<[^>]*DIFFTX_ISA[^>]*>" "$work/asm.txt" | sort -u | head
  exit 1
fi

# tzcnt is left out: baseline code may hold it as `rep bsf` (GCC's generic tuning), which older
# CPUs execute as bsf.
awk -v offenders="$work/offenders.txt" -v avxvnni="$work/avxvnni.txt" -v levels="$work/levels.txt" '
  /^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<") + 1); fn = substr(fn, 1, length(fn) - 2); next }
  /^ *[0-9a-f]+:\t/ {
    split($0, parts, "\t"); bytes = parts[2]; insn = parts[3]
    if (fn ~ /::isa_avxvnni::/) {
      if (bytes ~ /^62 / || insn ~ /%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])/) print "AVX-512 in " fn ": " insn > avxvnni
      if (insn ~ /^vpmaddubsw/) print "vpmaddubsw in " fn > avxvnni
      if (insn ~ /^\{vex\} vpdpbusd/ &&
          match(fn, /Q8_0Dots|Q4_0Dots|Q4_KDots|(tile|gemm_spans)<\(difftx::kernels::WeightType\)[345]/))
        vnni[substr(fn, RSTART, RLENGTH) ~ /Dots$/ ? substr(fn, RSTART, RLENGTH) : "gemm " substr(fn, RSTART + RLENGTH - 1, 1)] = 1
    }
    if (fn ~ /::isa_avx512f::/ && insn ~ /vpdp(bu|ws)sds?/) print "VNNI in " fn ": " insn > levels
    if (insn ~ /^v(cvtneps2bf16|cvtne2ps2bf16|dpbf16ps)/) print "BF16 in " fn ": " insn > levels
    if (fn ~ /::isa_avx(2|vnni|512f?)::/) next
    if (insn ~ /%[yz]mm|%k[0-7]/ || insn ~ /^(v[a-z0-9]+|shlx|shrx|sarx|rorx|andn|bextr|blsi|blsr|blsmsk|bzhi|pdep|pext|mulx|lzcnt|movbe|kmov[a-z]*)( |$)/) {
      if (!(fn in seen)) { seen[fn] = insn; order[++n] = fn }
    }
  }
  END {
    for (i = 1; i <= n; ++i) printf "%s\n    first: %s\n", order[i], seen[order[i]] > offenders
    split("Q8_0Dots,Q4_0Dots,Q4_KDots,gemm 3,gemm 4,gemm 5", kernels, ",")
    for (k in kernels) if (!(kernels[k] in vnni)) print "no {vex} vpdpbusd in " kernels[k] > avxvnni
  }' "$work/asm.txt"
if [ -s "$work/offenders.txt" ]; then
  echo "FAIL: functions outside the level namespaces use instructions beyond x86-64-v2:"
  head -40 "$work/offenders.txt"
  exit 1
fi
if grep -q "difftx::kernels::isa_avxvnni::" "$work/asm.txt" && [ -s "$work/avxvnni.txt" ]; then
  echo "FAIL: the avxvnni level:"
  sort -u "$work/avxvnni.txt" | head -20
  exit 1
fi
if [ -s "$work/levels.txt" ]; then
  echo "FAIL: instructions beyond a level's CPU check:"
  sort -u "$work/levels.txt" | head -20
  exit 1
fi
echo "ok: $(grep -c ">:$" "$work/asm.txt") functions checked"
