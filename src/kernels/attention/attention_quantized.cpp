#include "kernels/attention/attention_quantized.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"
#include "core/parallel_errors.h"
#include "core/threading.h"
#include "kernels/attention/attention_logits.h"
#include "kernels/attention/flash_pairs.h"
#include "kernels/gemm.h"
#include "kernels/vector_math.h"

namespace difftx::kernels {
namespace {

using DIFFTX_ISA::exp_approx;  // the baseline level's (vector_math.h)

constexpr int64_t kMaxT = 8192;  // one T x T map per thread: 256 MB each at this length

// Row t of a map: quantize the raw products s <= t, scale to logits, softmax in place, and zero
// the masked keys s > t (within the row's block they multiply V). Vectorised loops
// (exp_approx: relative error < 1.5e-7).
void softmax_row(float* row, int64_t t, int64_t block_end, const AbsmaxQuantizer& quantize, float scale) {
  const int64_t n = t + 1;
  float mx = -INFINITY;
  if (quantize.active()) {
#pragma omp simd reduction(max : mx)
    for (int64_t s = 0; s < n; ++s) {
      row[s] = static_cast<float>(quantize(row[s])) * scale;
      mx = std::max(mx, row[s]);
    }
  } else {
#pragma omp simd reduction(max : mx)
    for (int64_t s = 0; s < n; ++s) {
      row[s] *= scale;
      mx = std::max(mx, row[s]);
    }
  }
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t s = 0; s < n; ++s) sum += (row[s] = exp_approx(row[s] - mx));
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t s = 0; s < n; ++s) row[s] *= inv;
  std::fill(row + n, row + block_end, 0.0f);
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
  DIFFTX_CHECK(dims.window == 0, "attention_forward_quantized: a sliding window (", dims.window,
               ") is not supported with fake-quantized logits");
  check_logit_bits(bits);
  const char* kind = attention_kind_name(dims.kind);
  const bool baseline = !dims.variant().paired();
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
  // One (batch row, map) per work item; the GEMMs inside run on the calling thread. The checks
  // of attention_map_logits and gemm run inside: their errors leave through `errors`.
  ParallelErrors errors;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t item = 0; item < dims.B * maps; ++item) errors.run(item, [&] {
    const int64_t b = item / maps, j = item % maps;
    float* S = scores.data() + thread_index() * T * T;
    attention_map_logits(dims, q, k, b, j, 1.0f, S);  // raw products q . k
    float absmax = 0;
    for (int64_t t = 0; t < T; ++t) {
      const float* row = S + t * T;
#pragma omp simd reduction(max : absmax)
      for (int64_t s = 0; s <= t; ++s) absmax = std::max(absmax, std::fabs(row[s]));
    }
    const AbsmaxQuantizer quantize(absmax, bits);
    for (int64_t t = 0; t < T; ++t)
      softmax_row(S + t * T, t, std::min(T, (t / kLogitRows + 1) * kLogitRows), quantize, scale);
    // P V by the same row blocks as the logits: rows [r0, r1) see keys [0, r1).
    const float* v_group = v + b * T * vw + (j / L.maps_per_group) * dv;
    for (int64_t r0 = 0; r0 < T; r0 += kLogitRows) {
      const int64_t r1 = std::min(T, r0 + kLogitRows);
      gemm(Trans::N, Trans::N, r1 - r0, dv, r1, 1.0f, S + r0 * T, T, v_group, vw, 0.0f,
           a_out + ((b * T + r0) * maps + j) * dv, maps * dv);
    }
  });
  errors.rethrow();
  if (baseline) return;
  // Output heads from the map pairs, by blocks of token rows.
  const int64_t blocks = (T + kLogitRows - 1) / kLogitRows;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t item = 0; item < dims.B * blocks; ++item) {
    const int64_t b = item / blocks, t0 = item % blocks * kLogitRows;
    flash::pair_rows(L, a_out, lambda, out, b, t0, std::min(kLogitRows, T - t0), 0, dims.H);
  }
}

}  // namespace difftx::kernels
