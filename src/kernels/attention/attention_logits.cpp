#include "kernels/attention/attention_logits.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/attention/flash_layout.h"
#include "kernels/gemm.h"

namespace difftx::kernels {

int64_t attention_map_count(const AttentionDims& dims) {
  return dims.variant().maps();
}

void attention_map_logits(const AttentionDims& dims, const float* q, const float* k, int64_t b, int64_t map,
                          float scale, float* S) {
  dims.validate();
  DIFFTX_CHECK(q && k && S, "attention_map_logits: tensors q, k and S must not be null");
  DIFFTX_CHECK(b >= 0 && b < dims.B, "attention_map_logits: batch row ", b, " outside [0, ", dims.B, ")");
  DIFFTX_CHECK(map >= 0 && map < attention_map_count(dims), "attention_map_logits: map ", map, " outside [0, ",
               attention_map_count(dims), ")");
  const flash::MapLayout L(dims);
  const int64_t T = dims.T, d = dims.d, qw = dims.q_width(), kw = dims.k_width();
  const float* q_map = q + b * T * qw + map * d;
  const float* k_map = k + b * T * kw + L.key_head(map) * d;
  for (int64_t r0 = 0; r0 < T; r0 += kLogitRows) {
    const int64_t r1 = std::min(T, r0 + kLogitRows);
    gemm(Trans::N, Trans::T, r1 - r0, r1, d, scale, q_map + r0 * qw, qw, k_map, kw, 0.0f, S + r0 * T, T);
  }
}

}  // namespace difftx::kernels
