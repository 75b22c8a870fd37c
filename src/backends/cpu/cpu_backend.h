// The CPU as a backend (backend.h): host memory, and the ops of one CPU level through its kernel
// table (cpu_kernels.h). One instance per level built into the binary; cpu_backend() is the level
// in use. Device addresses are host addresses.
#pragma once
#include "backends/backend.h"
#include "backends/cpu/cpu_kernels.h"

namespace difftx::backends::cpu {

// The backend of a built level that this CPU runs (an error otherwise).
Backend& level_backend(CpuLevel level);

}  // namespace difftx::backends::cpu
