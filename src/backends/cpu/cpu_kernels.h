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

struct CpuKernels {
  // kernels/ops.h
  decltype(&kernels::DIFFTX_ISA::rmsnorm_forward) rmsnorm_forward;
  decltype(&kernels::DIFFTX_ISA::rmsnorm_backward) rmsnorm_backward;
  decltype(&kernels::DIFFTX_ISA::rope_inverse_frequency) rope_inverse_frequency;
  decltype(&kernels::DIFFTX_ISA::rope_table_build) rope_table_build;
  decltype(&kernels::DIFFTX_ISA::rope_forward) rope_forward;
  decltype(&kernels::DIFFTX_ISA::rope_backward) rope_backward;
  decltype(&kernels::DIFFTX_ISA::swiglu_forward) swiglu_forward;
  decltype(&kernels::DIFFTX_ISA::swiglu_backward) swiglu_backward;
  decltype(&kernels::DIFFTX_ISA::cross_entropy_forward_backward) cross_entropy_forward_backward;
  decltype(&kernels::DIFFTX_ISA::cross_entropy_sum) cross_entropy_sum;
  decltype(&kernels::DIFFTX_ISA::adamw_update) adamw_update;
  decltype(&kernels::DIFFTX_ISA::sum_of_squares) sum_of_squares;
  // kernels/layernorm.h, bias.h, mamba.h (a hybrid stack's)
  decltype(&kernels::DIFFTX_ISA::layernorm_forward) layernorm_forward;
  decltype(&kernels::DIFFTX_ISA::layernorm_backward) layernorm_backward;
  decltype(&kernels::DIFFTX_ISA::add_bias) add_bias;
  decltype(&kernels::DIFFTX_ISA::mamba_conv_prompt) mamba_conv_prompt;
  decltype(&kernels::DIFFTX_ISA::mamba_scan_prompt) mamba_scan_prompt;
  decltype(&kernels::DIFFTX_ISA::mamba_conv_step) mamba_conv_step;
  decltype(&kernels::DIFFTX_ISA::mamba_scan_step) mamba_scan_step;
  // kernels/attention/attention.h, flash.h, decode_attention.h
  decltype(&kernels::DIFFTX_ISA::attention_forward) attention_forward;
  decltype(&kernels::DIFFTX_ISA::attention_backward) attention_backward;
  decltype(&kernels::DIFFTX_ISA::flash::default_path) flash_default_path;
  decltype(&kernels::DIFFTX_ISA::flash::check_path) flash_check_path;
  decltype(&kernels::DIFFTX_ISA::flash::forward) flash_forward;
  decltype(&kernels::DIFFTX_ISA::flash::backward) flash_backward;
  decltype(&kernels::DIFFTX_ISA::decode_attention_rows) decode_attention_rows;
  // kernels/quant/
  MatmulByPath* matmul_by_path;
  MatmulByOrder* matmul_by_order;
  decltype(&kernels::DIFFTX_ISA::quantize_rows) quantize_rows;
  decltype(&kernels::DIFFTX_ISA::dequantize_rows) dequantize_rows;
  decltype(&kernels::DIFFTX_ISA::quant::gemm_int8_available) gemm_int8_available;
  decltype(&kernels::DIFFTX_ISA::quant::gemm_int8_reads_panels) gemm_int8_reads_panels;
  decltype(&kernels::DIFFTX_ISA::quant::gemm_float_available) gemm_float_available;
  decltype(&kernels::DIFFTX_ISA::quant::gemm_float_reads_panels) gemm_float_reads_panels;

  // Whether this level's GEMM for `type` multiplies prebuilt weight panels (kernels/quant/weight_panels.h).
  bool reads_panels(kernels::WeightType type) const {
    return gemm_int8_reads_panels(type) || gemm_float_reads_panels(type);
  }
};

// The table of the level in use (cpu_level()), and of any built level.
const CpuKernels& kernels();
const CpuKernels& kernels(CpuLevel level);

}  // namespace difftx::backends::cpu
