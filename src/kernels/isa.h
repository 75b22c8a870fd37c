// The namespace of the per-level kernel sources (kernels/cpu_level.h). CMakeLists.txt compiles
// each per-level source once per CPU level with -DDIFFTX_ISA=isa_<level>; everything else,
// and the baseline level's copy, is compiled with the build's baseline flags and this default.
// Per-level sources and the headers only they include put their code in difftx::kernels::DIFFTX_ISA,
// so that the levels' copies of a function (or of an inline function or template in such a
// header) never share a symbol.
#pragma once
#include "cpu_levels_built.h"  // generated: DIFFTX_ISA_BASELINE

#ifndef DIFFTX_ISA
#define DIFFTX_ISA DIFFTX_ISA_BASELINE
#endif
