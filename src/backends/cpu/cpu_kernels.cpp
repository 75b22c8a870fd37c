#include "backends/cpu/cpu_kernels.h"

#include <array>

#include "core/error.h"
#include "cpu_levels_built.h"  // generated: DIFFTX_FOR_EACH_LEVEL

#define DIFFTX_DECLARE_TABLE(ns, ...)                    \
  namespace difftx::kernels::ns {                       \
  extern const backends::cpu::CpuKernels kernel_table;  \
  }
DIFFTX_FOR_EACH_LEVEL(DIFFTX_DECLARE_TABLE, )
#undef DIFFTX_DECLARE_TABLE

namespace difftx::backends::cpu {
namespace {

#define DIFFTX_TABLE_ADDRESS(ns, ...) &::difftx::kernels::ns::kernel_table,
// Indexed like cpu_levels_built().
constexpr std::array<const CpuKernels*, DIFFTX_CPU_LEVEL_COUNT> kTables{DIFFTX_FOR_EACH_LEVEL(DIFFTX_TABLE_ADDRESS, )};
#undef DIFFTX_TABLE_ADDRESS

}  // namespace

const CpuKernels& kernels() { return *kTables[cpu_level_index()]; }

const CpuKernels& kernels(CpuLevel level) {
  const std::vector<CpuLevel>& built = cpu_levels_built();
  for (size_t i = 0; i < built.size(); ++i)
    if (built[i] == level) return *kTables[i];
  fail("CPU level '", cpu_level_name(level), "' is not compiled into this binary");
}

}  // namespace difftx::backends::cpu
