// The kernels the tests call most, as functions over the active CPU level's table
// (backends/cpu/cpu_kernels.h): the table, matmul by path or by order, and one row of decode
// attention.
#pragma once
#include <cstdint>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"

namespace difftx {

// The table of the CPU level in use.
inline const backends::cpu::CpuKernels& cpu() { return backends::cpu::kernels(); }

inline void matmul(const kernels::WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate = false,
                   kernels::MatmulPath path = kernels::MatmulPath::best) {
  backends::cpu::kernels().matmul_by_path(W, x, y, N, accumulate, path);
}
inline void matmul(const kernels::WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate,
                   kernels::MatmulOrder order) {
  backends::cpu::kernels().matmul_by_order(W, x, y, N, accumulate, order);
}

// One row over a contiguous cache of dims.capacity positions (one page).
inline void decode_attention(const kernels::DecodeAttentionDims& dims, int64_t length, const float* q, const void* keys,
                             const void* values, const float* lambda, float* out,
                             kernels::DecodeAttentionScratch& scratch) {
  DIFFTX_CHECK(length >= 1 && length <= dims.capacity, "decode attention: cache length ", length,
               " must be in [1, capacity = ", dims.capacity, "]");
  const kernels::DecodeAttentionRow row{q, length, kernels::KvPages{&keys, &values}, lambda, out};
  backends::cpu::kernels().decode_attention_rows(dims, {&row, 1}, scratch);
}

}  // namespace difftx
