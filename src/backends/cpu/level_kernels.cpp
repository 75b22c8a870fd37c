// A CPU level's kernel table (cpu_kernels.h), filled from the level's namespace: compiled once per
// level with the kernels (CMakeLists.txt: a source whose code opens difftx::kernels::DIFFTX_ISA is per level).
#include "backends/cpu/cpu_kernels.h"

namespace difftx::kernels::DIFFTX_ISA {

extern const backends::cpu::CpuKernels kernel_table;
const backends::cpu::CpuKernels kernel_table{
#define DIFFTX_KERNEL_ENTRY(entry, function) .entry = &function,
    DIFFTX_CPU_KERNELS(DIFFTX_KERNEL_ENTRY)
#undef DIFFTX_KERNEL_ENTRY
    .matmul_by_path = &matmul,
    .matmul_by_order = &matmul,
};

}  // namespace difftx::kernels::DIFFTX_ISA
