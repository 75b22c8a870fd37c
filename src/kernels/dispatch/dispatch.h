// Defining a public kernel function as a call to the active CPU level's copy (kernels/cpu_level.h):
//
//   DIFFTX_LEVELS_DECLARE(rmsnorm_forward)     // declares isa_<level>::rmsnorm_forward per level
//   void rmsnorm_forward(const float* x, ...) { return DIFFTX_LEVEL_CALL(rmsnorm_forward)(x, ...); }
//
// For an overloaded name, DIFFTX_LEVELS_DECLARE_AS(type, name) and DIFFTX_LEVEL_CALL_AS(type, name)
// take the function type; the _IN forms take an inner namespace (flash, quant).
#pragma once
#include <array>

#include "cpu_levels_built.h"  // generated: DIFFTX_FOR_EACH_LEVEL(M, ...), one M(isa_<level>, ...) per level
#include "kernels/cpu_level.h"

#define DIFFTX_LEVEL_DECLARE_ONE(ns, type, name) \
  namespace ns {                                 \
  type name;                                     \
  }
#define DIFFTX_LEVEL_DECLARE_ONE_IN(ns, inner, type, name) \
  namespace ns::inner {                                    \
  type name;                                               \
  }
#define DIFFTX_LEVEL_ADDRESS(ns, type, name) &::difftx::ns::name,
#define DIFFTX_LEVEL_ADDRESS_IN(ns, inner, type, name) &::difftx::ns::inner::name,

#define DIFFTX_LEVELS_DECLARE_AS(type, name) DIFFTX_FOR_EACH_LEVEL(DIFFTX_LEVEL_DECLARE_ONE, type, name)
#define DIFFTX_LEVELS_DECLARE(name) DIFFTX_LEVELS_DECLARE_AS(decltype(::difftx::name), name)
#define DIFFTX_LEVELS_DECLARE_IN(inner, name) \
  DIFFTX_FOR_EACH_LEVEL(DIFFTX_LEVEL_DECLARE_ONE_IN, inner, decltype(::difftx::inner::name), name)

#define DIFFTX_LEVEL_CALL_AS(type, name) \
  (std::array<type*, DIFFTX_CPU_LEVEL_COUNT>{DIFFTX_FOR_EACH_LEVEL(DIFFTX_LEVEL_ADDRESS, type, name)}[::difftx::cpu_level_index()])
#define DIFFTX_LEVEL_CALL(name) DIFFTX_LEVEL_CALL_AS(decltype(::difftx::name), name)
#define DIFFTX_LEVEL_CALL_IN(inner, name)                                                              \
  (std::array<decltype(::difftx::inner::name)*, DIFFTX_CPU_LEVEL_COUNT>{DIFFTX_FOR_EACH_LEVEL(   \
      DIFFTX_LEVEL_ADDRESS_IN, inner, decltype(::difftx::inner::name), name)}[::difftx::cpu_level_index()])
