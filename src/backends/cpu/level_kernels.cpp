// A CPU level's kernel table (cpu_kernels.h), filled from the level's namespace: compiled once per
// level with the kernels (CMakeLists.txt: a source whose code opens difftx::kernels::DIFFTX_ISA is per level).
#include "backends/cpu/cpu_kernels.h"

namespace difftx::kernels::DIFFTX_ISA {

extern const backends::cpu::CpuKernels kernel_table;
const backends::cpu::CpuKernels kernel_table{
    .rmsnorm_forward = &rmsnorm_forward,
    .rmsnorm_backward = &rmsnorm_backward,
    .rope_inverse_frequency = &rope_inverse_frequency,
    .rope_table_build = &rope_table_build,
    .rope_forward = &rope_forward,
    .rope_backward = &rope_backward,
    .swiglu_forward = &swiglu_forward,
    .swiglu_backward = &swiglu_backward,
    .cross_entropy_forward_backward = &cross_entropy_forward_backward,
    .cross_entropy_sum = &cross_entropy_sum,
    .adamw_update = &adamw_update,
    .sum_of_squares = &sum_of_squares,
    .layernorm_forward = &layernorm_forward,
    .layernorm_backward = &layernorm_backward,
    .add_bias = &add_bias,
    .mamba_conv_prompt = &mamba_conv_prompt,
    .mamba_scan_prompt = &mamba_scan_prompt,
    .mamba_conv_step = &mamba_conv_step,
    .mamba_scan_step = &mamba_scan_step,
    .attention_forward = &attention_forward,
    .attention_backward = &attention_backward,
    .flash_default_path = &flash::default_path,
    .flash_check_path = &flash::check_path,
    .flash_forward = &flash::forward,
    .flash_backward = &flash::backward,
    .decode_attention_rows = &decode_attention_rows,
    .matmul_by_path = &matmul,
    .matmul_by_order = &matmul,
    .quantize_rows = &quantize_rows,
    .dequantize_rows = &dequantize_rows,
    .gemm_int8_available = &quant::gemm_int8_available,
    .gemm_int8_reads_panels = &quant::gemm_int8_reads_panels,
    .gemm_float_available = &quant::gemm_float_available,
    .gemm_float_reads_panels = &quant::gemm_float_reads_panels,
};

}  // namespace difftx::kernels::DIFFTX_ISA
