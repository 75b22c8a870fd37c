// The CPU levels difftx's kernels are compiled for, and the one in use (docs/ARCHITECTURE.md
// "CPU levels"). Every per-level source (one whose code opens namespace difftx::kernels::DIFFTX_ISA)
// is compiled once per level of the build, into namespace difftx::kernels::isa_<level>; each level's kernel
// table (cpu_kernels.h) holds its copies. The level is chosen once, at the first use, from CPUID
// (the highest level this CPU runs), unless DIFFTX_CPU names one.
#pragma once
#include <string>
#include <vector>

namespace difftx {

// x86-64: scalar (x86-64-v2), avx2 (x86-64-v3: AVX2, FMA, F16C, BMI2), avxvnni (x86-64-v3 with
// AVX-VNNI), avx512f (x86-64-v4: AVX-512 F/BW/VL/DQ/CD, whose int8 kernels are avx2's), avx512
// (x86-64-v4 with AVX-512 VNNI); arm64: neon (armv8-a), dotprod (armv8.2-a with the int8 dot
// product), i8mm (dotprod and the int8 matrix multiply). A -DDIFFTX_NATIVE=ON build has the
// single level native (-march=native).
enum class CpuLevel { scalar, avx2, avxvnni, avx512f, avx512, neon, dotprod, i8mm, native };

const char* cpu_level_name(CpuLevel level);
// Levels compiled into this binary, lowest first.
const std::vector<CpuLevel>& cpu_levels_built();
// Whether this CPU can execute the level's code.
bool cpu_runs(CpuLevel level);
// The built levels this CPU runs, lowest first.
std::vector<CpuLevel> cpu_levels_runnable();
// The level in use. The first call reads DIFFTX_CPU (a level name); one this binary lacks or
// this CPU cannot run throws difftx::Error naming the choices.
CpuLevel cpu_level();
// Index of cpu_level() in cpu_levels_built() (what the kernel tables are indexed by).
int cpu_level_index();
CpuLevel parse_cpu_level(const std::string& name);
// "avx512 (avx512f avx512bw avx512vl avx512dq avx512cd avx512vnni)": the level in use and the
// CPU features it relies on.
std::string cpu_level_description();

}  // namespace difftx
