// Reference single-query attention, written out per variant as docs/SPEC.md §2 states it: every map's
// scores over the cache materialised, softmax and weighted sums in double.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "io/float16.h"
#include "reference/decode_attention_reference.h"

namespace difftx {
namespace {

// Element i of the cache's keys or values, widened (INT8: times its row's scale).
double element(const kernels::DecodeAttentionDims& a, const void* data, int64_t i, const float* scale) {
  switch (a.storage) {
    case kernels::KvStorage::f32: return static_cast<const float*>(data)[i];
    case kernels::KvStorage::bf16: return io::bf16_to_float(static_cast<const uint16_t*>(data)[i]);
    case kernels::KvStorage::int8: return static_cast<double>(static_cast<const int8_t*>(data)[i]) * *scale;
  }
  return 0;
}
double key(const kernels::DecodeAttentionDims& a, const void* keys, int64_t g, int64_t t, int64_t column) {
  const int64_t row = g * a.key_heads_per_kv_head() + column / a.d;  // the key head holding the column
  const float* scale = a.storage == kernels::KvStorage::int8
                           ? kernels::key_scales(a, keys) + row * kernels::scale_stride(a) + t
                           : nullptr;
  return element(a, keys, kernels::key_offset(a, g, t, column), scale);
}
double value(const kernels::DecodeAttentionDims& a, const void* values, int64_t g, int64_t t, int64_t x) {
  const float* scale = a.storage == kernels::KvStorage::int8
                           ? kernels::value_scales(a, values) + g * kernels::scale_stride(a) + t
                           : nullptr;
  return element(a, values, (g * a.capacity + t) * a.value_width() + x, scale);
}

// softmax(q . k_t / sqrt(d)) over the positions t < length the row sees (the last a.window with
// a window), then sum_t p_t v_t: one map's output, width vw.
std::vector<double> attend(const kernels::DecodeAttentionDims& a, int64_t length, const float* q, const void* keys,
                           int64_t g, int64_t first_column, const void* values) {
  const int64_t d = a.d, vw = a.value_width(), first = a.window > 0 ? std::max<int64_t>(0, length - a.window) : 0;
  std::vector<double> scores(length, -INFINITY);
  double mx = -INFINITY;
  for (int64_t t = first; t < length; ++t) {
    double s = 0;
    for (int64_t x = 0; x < d; ++x) s += static_cast<double>(q[x]) * key(a, keys, g, t, first_column + x);
    scores[t] = s / std::sqrt(static_cast<double>(d));
    mx = std::max(mx, scores[t]);
  }
  double sum = 0;
  for (double& s : scores) sum += (s = std::exp(s - mx));
  std::vector<double> o(vw, 0.0);
  for (int64_t t = first; t < length; ++t)
    for (int64_t x = 0; x < vw; ++x) o[x] += scores[t] / sum * value(a, values, g, t, x);
  return o;
}

}  // namespace

std::vector<double> decode_attention_reference(const kernels::DecodeAttentionDims& a, int64_t length, const float* q,
                                               const void* keys, const void* values, const float* lambda) {
  a.attention_dims().validate();
  DIFFTX_CHECK(length >= 1 && length <= a.capacity, "decode attention reference: length ", length,
               " outside [1, ", a.capacity, "]");
  const int64_t d = a.d, H = a.H, n_rep = a.H / a.Hkv;
  std::vector<double> out(a.attention_dims().out_width());
  switch (a.kind) {
    case kernels::AttentionKind::baseline:  // head i uses kv head i / n_rep
      for (int64_t i = 0; i < H; ++i) {
        const auto o = attend(a, length, q + i * d, keys, i / n_rep, 0, values);
        std::copy(o.begin(), o.end(), out.begin() + i * d);
      }
      break;
    case kernels::AttentionKind::diff:  // head i: (A1 - lambda A2) v_g, q = [q1|q2], k = [k1|k2] (Eq. 1)
      for (int64_t i = 0; i < H; ++i) {
        const int64_t g = i / n_rep;
        const auto o1 = attend(a, length, q + 2 * i * d, keys, g, 0, values);
        const auto o2 = attend(a, length, q + (2 * i + 1) * d, keys, g, d, values);
        const double c = a.pair_weight<double>(lambda, 0, i);
        for (int64_t x = 0; x < 2 * d; ++x) out[i * 2 * d + x] = o1[x] - c * o2[x];
      }
      break;
    case kernels::AttentionKind::diff_grouped: {
      // head i: signal query n (r + 1) + i % r with k1, noise n (r + 1) + r with k2
      const int64_t r = a.r, per_kv = H / r / a.Hkv;
      for (int64_t i = 0; i < H; ++i) {
        const int64_t n = i / r, g = n / per_kv;
        const auto o1 = attend(a, length, q + (n * (r + 1) + i % r) * d, keys, g, 0, values);
        const auto o2 = attend(a, length, q + (n * (r + 1) + r) * d, keys, g, d, values);
        const double c = a.pair_weight<double>(lambda, 0, i);
        for (int64_t x = 0; x < 2 * d; ++x) out[i * 2 * d + x] = o1[x] - c * o2[x];
      }
      break;
    }
    case kernels::AttentionKind::diff2: {  // output head i: a_2i - sigmoid(logit_i) a_2i+1, query head j uses kv head j / (2H/Hkv)
      const int64_t per_kv = 2 * H / a.Hkv;
      for (int64_t i = 0; i < H; ++i) {
        const auto o1 = attend(a, length, q + 2 * i * d, keys, 2 * i / per_kv, 0, values);
        const auto o2 = attend(a, length, q + (2 * i + 1) * d, keys, (2 * i + 1) / per_kv, 0, values);
        const double c = a.pair_weight<double>(lambda, 0, i);
        for (int64_t x = 0; x < d; ++x) out[i * d + x] = o1[x] - c * o2[x];
      }
      break;
    }
  }
  return out;
}

}  // namespace difftx
