# Runs the kernel and whole-model oracle tests at one CPU level (kernels/cpu_level.h) through
# DIFFTX_CPU: every level's copy of the kernels against the reference twins, and the models
# against their oracles (registered per level by CMakeLists.txt as cpu_level.LEVEL).
# Skips (77) a level this CPU cannot run, and the one the rest of the suite already runs at.
# Usage: bash tests/run_at_cpu_level.sh LEVEL DIFFTX DIFFTX_TESTS
set -euo pipefail
level="$1" difftx="$2" tests="$3"
if ! why="$(DIFFTX_CPU="$level" "$difftx" --version 2>&1 > /dev/null)"; then
  echo "SKIP: level $level does not run here: $why"; exit 77
fi
if [ "$("$difftx" --version | sed -n 's/^cpu level: \([a-z0-9]*\).*/\1/p')" = "$level" ]; then
  echo "SKIP: level $level is the default here: the whole suite runs at it"; exit 77
fi
kernels='Gemm.SelectsTheKernelsOfTheLevel:AttentionReference.*:DecodeAttention.*:DiffClampAttention.*'
kernels+=':AbsmaxQuantizer.*:QuantizedAttentionErrors.*:Shapes/*:Variants/*:AdamW.*:CrossEntropy.*:RmsNorm.*'
kernels+=':Rope.*:SumOfSquares.*:Swiglu.*:QuantFormat.*:QuantMatmulOrder.*:QuantMatmul.*:QuantRoundTrip.*'
models='HfFixtures.*:OracleFixtures.*:Hf/*:Oracle/*'
DIFFTX_CPU="$level" exec "$tests" --gtest_filter="$kernels:$models" --gtest_brief=1
