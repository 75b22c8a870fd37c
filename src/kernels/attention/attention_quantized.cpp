#include "kernels/attention/attention_quantized.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"
#include "core/threading.h"
#include "kernels/attention/attention_logits.h"
#include "kernels/attention/flash_pairs.h"
#include "kernels/gemm.h"

namespace difftx {
namespace {

constexpr int64_t kMaxT = 8192;  // T x T floats per map: 256 MB at this length

// Row t of a map: quantize the raw products s <= t, scale to logits, softmax in place, and zero
// the masked keys s > t so that the whole square can multiply V.
void softmax_row(float* row, int64_t t, int64_t T, const AbsmaxQuantizer& quantize, float scale) {
  float mx = -INFINITY;
  for (int64_t s = 0; s <= t; ++s) {
    row[s] = static_cast<float>(quantize(row[s])) * scale;
    mx = std::max(mx, row[s]);
  }
  double sum = 0;
  for (int64_t s = 0; s <= t; ++s) sum += (row[s] = std::exp(row[s] - mx));
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t s = 0; s <= t; ++s) row[s] *= inv;
  std::fill(row + t + 1, row + T, 0.0f);
}

}  // namespace

void check_logit_bits(int bits) {
  DIFFTX_CHECK(bits == 0 || (bits >= 2 && bits <= 16),
               "attention logit bits must be 0 (no quantization) or between 2 and 16, got ", bits);
}

AbsmaxQuantizer::AbsmaxQuantizer(double absmax, int bits) : active_(bits != 0 && !(absmax == 0)) {
  check_logit_bits(bits);
  if (!active_) return;
  // An infinite or NaN absmax gives NaN levels: like a plain softmax over such logits, the
  // result is NaN rather than an exception (this runs inside parallel regions).
  const double levels = std::ldexp(1.0, bits - 1) - 1;
  to_level_ = std::isfinite(absmax) ? levels / absmax : std::numeric_limits<double>::quiet_NaN();
  step_ = absmax / levels;
}

void attention_forward_quantized(const AttentionDims& dims, const float* q, const float* k, const float* v,
                                 const float* lambda, float* out, int bits) {
  dims.validate();
  check_logit_bits(bits);
  const char* kind = attention_kind_name(dims.kind);
  const bool baseline = dims.kind == AttentionKind::baseline;
  DIFFTX_CHECK(q && k && v && out, "attention_forward_quantized (", kind, "): tensors q, k, v and out must not be null");
  DIFFTX_CHECK(baseline || lambda, "attention_forward_quantized (", kind, "): tensor lambda must not be null");
  DIFFTX_CHECK(dims.T <= kMaxT, "attention_forward_quantized (", kind, "): materialises T x T maps, so T must be <= ",
               kMaxT, ", got ", dims.T);

  const flash::MapLayout L(dims);
  const int64_t T = dims.T, maps = L.maps, dv = L.dv, vw = dims.v_width();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dims.d)));
  const int threads = thread_count();
  Buffer<float> scores(threads * T * T);  // one T x T map per thread
  std::vector<float> per_map(baseline ? 0 : dims.B * T * maps * dv);
  float* a_out = baseline ? out : per_map.data();  // per-map outputs [B, T, maps, dv], as flash_layout.h
  // One (batch row, map) per work item; the GEMMs inside run on the calling thread.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t item = 0; item < dims.B * maps; ++item) {
    const int64_t b = item / maps, j = item % maps;
    float* S = scores.data() + thread_index() * T * T;
    attention_map_logits(dims, q, k, b, j, 1.0f, S);  // raw products q . k
    float absmax = 0;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t s = 0; s <= t; ++s) absmax = std::max(absmax, std::fabs(S[t * T + s]));
    const AbsmaxQuantizer quantize(absmax, bits);
    for (int64_t t = 0; t < T; ++t) softmax_row(S + t * T, t, T, quantize, scale);
    const float* v_group = v + b * T * vw + (j / L.maps_per_group) * dv;
    gemm(Trans::N, Trans::N, T, dv, T, 1.0f, S, T, v_group, vw, 0.0f, a_out + (b * T * maps + j) * dv, maps * dv);
  }
  if (!baseline) flash::pair_forward(L, a_out, lambda, out);
}

}  // namespace difftx
