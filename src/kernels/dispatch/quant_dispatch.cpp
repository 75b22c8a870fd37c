// The weight-matrix products and conversions (matmul.h, quantize.h, gemm_int8.h, gemm_float.h),
// each a call to the CPU level's copy (dispatch.h).
#include "kernels/dispatch/dispatch.h"
#include "kernels/quant/gemm_float.h"
#include "kernels/quant/gemm_int8.h"
#include "kernels/quant/matmul.h"
#include "kernels/quant/quantize.h"

namespace difftx {

// matmul is overloaded (by path, by order): each declared by its type.
using MatmulByPath = void(const WeightMatrix&, const float*, float*, int64_t, bool, MatmulPath);
using MatmulByOrder = void(const WeightMatrix&, const float*, float*, int64_t, bool, MatmulOrder);
DIFFTX_LEVELS_DECLARE_AS(MatmulByPath, matmul)
DIFFTX_LEVELS_DECLARE_AS(MatmulByOrder, matmul)
DIFFTX_LEVELS_DECLARE(matmul_reference)
DIFFTX_LEVELS_DECLARE(quantize_rows)
DIFFTX_LEVELS_DECLARE(dequantize_rows)
DIFFTX_LEVELS_DECLARE_IN(quant, gemm_int8_available)
DIFFTX_LEVELS_DECLARE_IN(quant, gemm_int8)
DIFFTX_LEVELS_DECLARE_IN(quant, gemm_int8_reads_panels)
DIFFTX_LEVELS_DECLARE_IN(quant, gemm_float_available)
DIFFTX_LEVELS_DECLARE_IN(quant, gemm_float)
DIFFTX_LEVELS_DECLARE_IN(quant, gemm_float_reads_panels)

void matmul(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate, MatmulPath path) {
  DIFFTX_LEVEL_CALL_AS(MatmulByPath, matmul)(W, x, y, N, accumulate, path);
}
void matmul(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate, MatmulOrder order) {
  DIFFTX_LEVEL_CALL_AS(MatmulByOrder, matmul)(W, x, y, N, accumulate, order);
}
void matmul_reference(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  DIFFTX_LEVEL_CALL(matmul_reference)(W, x, y, N, accumulate);
}
void quantize_rows(WeightType type, const float* src, void* dst, int64_t rows, int64_t cols) {
  DIFFTX_LEVEL_CALL(quantize_rows)(type, src, dst, rows, cols);
}
void dequantize_rows(WeightType type, const void* src, float* dst, int64_t rows, int64_t cols) {
  DIFFTX_LEVEL_CALL(dequantize_rows)(type, src, dst, rows, cols);
}

namespace quant {

bool gemm_int8_available(WeightType type) { return DIFFTX_LEVEL_CALL_IN(quant, gemm_int8_available)(type); }
bool gemm_int8_reads_panels(WeightType type) { return DIFFTX_LEVEL_CALL_IN(quant, gemm_int8_reads_panels)(type); }
void gemm_int8(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  DIFFTX_LEVEL_CALL_IN(quant, gemm_int8)(W, x, y, N, accumulate);
}
bool gemm_float_available(WeightType type) { return DIFFTX_LEVEL_CALL_IN(quant, gemm_float_available)(type); }
bool gemm_float_reads_panels(WeightType type) { return DIFFTX_LEVEL_CALL_IN(quant, gemm_float_reads_panels)(type); }
void gemm_float(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  DIFFTX_LEVEL_CALL_IN(quant, gemm_float)(W, x, y, N, accumulate);
}

}  // namespace quant
}  // namespace difftx
