// The CPU levels' kernel tables (docs/ARCHITECTURE.md "CPU levels"). Every per-level kernel source
// is compiled once per level into difftx::kernels::isa_<level>; level_kernels.cpp, compiled with them,
// fills that level's table from its namespace, and the CPU backend of a level (cpu_backend.h)
// calls through its table. The table is the one dispatch: nothing else picks a level's copy.
// Each entry has the contract documented beside its declaration in kernels/.
#pragma once
#include <span>

#include "backends/cpu/cpu_level.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/decode_attention.h"
#include "kernels/attention/flash.h"
#include "kernels/bias.h"
#include "kernels/layernorm.h"
#include "kernels/mamba.h"
#include "kernels/ops.h"
#include "kernels/quant/gemm_float.h"
#include "kernels/quant/gemm_int8.h"
#include "kernels/quant/matmul.h"
#include "kernels/quant/quantize.h"

namespace difftx::backends::cpu {

using MatmulByPath = void(const kernels::WeightMatrix&, const float*, float*, int64_t, bool, kernels::MatmulPath);
using MatmulByOrder = void(const kernels::WeightMatrix&, const float*, float*, int64_t, bool, kernels::MatmulOrder);

// A table's entries but matmul's two overloads: X(entry, the function of the level's namespace).
#define DIFFTX_CPU_KERNELS(X)                                       \
  /* kernels/ops.h */                                               \
  X(rmsnorm_forward, rmsnorm_forward)                               \
  X(rmsnorm_backward, rmsnorm_backward)                             \
  X(rope_inverse_frequency, rope_inverse_frequency)                 \
  X(rope_table_build, rope_table_build)                             \
  X(rope_forward, rope_forward)                                     \
  X(rope_backward, rope_backward)                                   \
  X(swiglu_forward, swiglu_forward)                                 \
  X(swiglu_backward, swiglu_backward)                               \
  X(cross_entropy_forward_backward, cross_entropy_forward_backward) \
  X(cross_entropy_sum, cross_entropy_sum)                           \
  X(adamw_update, adamw_update)                                     \
  X(sum_of_squares, sum_of_squares)                                 \
  /* kernels/layernorm.h, bias.h, mamba.h (a hybrid stack's) */     \
  X(layernorm_forward, layernorm_forward)                           \
  X(layernorm_backward, layernorm_backward)                         \
  X(add_bias, add_bias)                                             \
  X(mamba_conv_prompt, mamba_conv_prompt)                           \
  X(mamba_scan_prompt, mamba_scan_prompt)                           \
  X(mamba_conv_step, mamba_conv_step)                               \
  X(mamba_scan_step, mamba_scan_step)                               \
  /* kernels/attention/attention.h, flash.h, decode_attention.h */  \
  X(attention_forward, attention_forward)                           \
  X(attention_backward, attention_backward)                         \
  X(flash_default_path, flash::default_path)                        \
  X(flash_check_path, flash::check_path)                            \
  X(flash_forward, flash::forward)                                  \
  X(flash_backward, flash::backward)                                \
  X(decode_attention_rows, decode_attention_rows)                   \
  /* kernels/quant/ (and matmul below) */                           \
  X(quantize_rows, quantize_rows)                                   \
  X(dequantize_rows, dequantize_rows)                               \
  X(row_dots_int8_available, row_dots_int8_available)               \
  X(gemm_int8_available, quant::gemm_int8_available)                \
  X(gemm_int8_reads_panels, quant::gemm_int8_reads_panels)          \
  X(gemm_float_available, quant::gemm_float_available)              \
  X(gemm_float_reads_panels, quant::gemm_float_reads_panels)

struct CpuKernels {
#define DIFFTX_KERNEL_FIELD(entry, function) decltype(&kernels::DIFFTX_ISA::function) entry;
  DIFFTX_CPU_KERNELS(DIFFTX_KERNEL_FIELD)
#undef DIFFTX_KERNEL_FIELD
  MatmulByPath* matmul_by_path;
  MatmulByOrder* matmul_by_order;

  // Whether this level's GEMM for `type` multiplies prebuilt weight panels (kernels/quant/weight_panels.h).
  bool reads_panels(kernels::WeightType type) const {
    return gemm_int8_reads_panels(type) || gemm_float_reads_panels(type);
  }
};

// The table of the level in use (cpu_level()), and of any built level.
const CpuKernels& kernels();
const CpuKernels& kernels(CpuLevel level);

}  // namespace difftx::backends::cpu
