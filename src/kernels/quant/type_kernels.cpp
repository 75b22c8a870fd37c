// The level's table of kernels by weight type (type_kernels.h), filled from every kernel source's
// registration at the first use.
#include "kernels/quant/type_kernels.h"

#include "core/error.h"
#include "kernels/quant/gemm_float.h"
#include "kernels/quant/gemm_int8.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA::quant {

const TypeKernels& type_kernels(WeightType type) {
  static const TypeKernelTable table = [] {
    TypeKernelTable t;
    for (auto add : {register_quantizers, register_row_dots_scalar, register_row_dots_avx512, register_row_dots_avx2,
                     register_row_dots_neon, register_row_dots_vnni, register_row_dots_int8_avx2,
                     register_row_dots_int8_neon, register_gemm_int8, register_gemm_float})
      add(t);
    for (const WeightTypeInfo& info : weight_types()) {
      const TypeKernels& k = t[info.type];
      DIFFTX_CHECK(k.quantize_row && k.dequantize_row && k.row_dots_scalar, "weight type ", info.name,
                   ": its quantizer, dequantizer or portable row dots are not registered (type_kernels.h)");
    }
    return t;
  }();
  return table.entries[static_cast<size_t>(type)];
}

bool gemm_int8_available(WeightType type) { return type_kernels(type).gemm_int8 != nullptr; }
bool gemm_int8_reads_panels(WeightType type) { return type_kernels(type).gemm_int8_reads_panels; }
bool gemm_float_available(WeightType type) { return type_kernels(type).gemm_float != nullptr; }
bool gemm_float_reads_panels(WeightType type) { return type_kernels(type).gemm_float_reads_panels; }

}  // namespace difftx::kernels::DIFFTX_ISA::quant
