// Sliding-window attention (AttentionDims::window, DecodeAttentionDims::window): query t sees keys
// [t - window + 1, t]. The fused flash forward (both tile paths) against the double reference on
// windows shorter than a tile, straddling tiles and longer than the sequence; the reference by
// perturbation (a key just before the window changes nothing, the window's first key does); decode
// attention against its reference and against the last row of the windowed prefill, with the
// cache before the window poisoned with NaN and, paged, its pages absent; the backward and the
// fake-quantized kernel refuse a window by name.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "kernels/attention/attention_case.h"
#include "kernels/attention/attention_quantized.h"
#include "kernels/attention/decode_attention.h"
#include "kernels/attention/flash.h"
#include "reference/attention_reference.h"
#include "reference/decode_attention_reference.h"
#include "support/level_kernels.h"

namespace difftx::kernels {
namespace {

using testing::AttentionCase;
using testing::expect_close;

const float kNan = std::numeric_limits<float>::quiet_NaN();

struct WindowVariant {
  AttentionKind kind;
  int64_t H, r;
};
const WindowVariant kWindowVariants[] = {{AttentionKind::baseline, 4, 1},
                             {AttentionKind::diff, 4, 1},
                             {AttentionKind::diff2, 4, 1},
                             {AttentionKind::diff_grouped, 8, 2}};

std::vector<float> fused_forward(flash::Path path, const AttentionDims& dims, const AttentionCase& c) {
  std::vector<float> out(c.rows() * dims.out_width(), kNan), lse(attention_lse_floats(dims), kNan);
  std::vector<float> maps_out(attention_maps_out_floats(dims), kNan);
  cpu().flash_forward(path, dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(),
                      {lse.data(), maps_out.empty() ? nullptr : maps_out.data()});
  return out;
}

TEST(SlidingWindow, FusedForwardMatchesReference) {
  int cases = 0;
  for (const WindowVariant& variant : kWindowVariants)
    for (const auto& [B, T, d] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 16}, {2, 70, 32}, {1, 150, 16}})
      for (int64_t window : {1, 3, 64, 65, 500}) {
        const AttentionDims dims{variant.kind, B, T, variant.H, 2, d, variant.r, window};
        const AttentionCase c = AttentionCase::random(dims, 300 + cases++);
        std::vector<float> want(c.rows() * dims.out_width());
        attention_forward_reference(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), want.data());
        for (flash::Path path : testing::flash_paths(dims))
          expect_close(fused_forward(path, dims, c), want, 5e-6, 1e-5,
                       testing::describe(dims) + " window=" + std::to_string(window) +
                           (path == flash::Path::simd ? " simd" : " scalar"));
      }
  EXPECT_EQ(cases, 60);
}

TEST(SlidingWindow, AWindowAsLongAsTheSequenceIsNoWindow) {
  const AttentionDims full{AttentionKind::diff, 2, 90, 4, 2, 16};
  const AttentionCase c = AttentionCase::random(full, 17);
  for (int64_t window : {90, 91, 1000}) {
    AttentionDims windowed = full;
    windowed.window = window;
    for (flash::Path path : testing::flash_paths(full))
      EXPECT_EQ(fused_forward(path, windowed, c), fused_forward(path, full, c)) << "window " << window;
  }
}

TEST(SlidingWindow, ReferenceSeesExactlyTheWindow) {
  const int64_t T = 12, window = 5, t = T - 1;
  const AttentionDims dims{AttentionKind::diff, 1, T, 2, 1, 8, 1, window};
  const AttentionCase c = AttentionCase::random(dims, 23);
  std::vector<float> base(T * dims.out_width());
  attention_forward_reference(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), base.data());
  for (const auto& [s, inside] :
       std::vector<std::pair<int64_t, bool>>{{t - window, false}, {t - window + 1, true}, {0, false}}) {
    AttentionCase moved = c;
    for (int64_t x = 0; x < dims.k_width(); ++x) moved.k[s * dims.k_width() + x] += 1.0f;
    for (int64_t x = 0; x < dims.v_width(); ++x) moved.v[s * dims.v_width() + x] += 1.0f;
    std::vector<float> out(base.size());
    attention_forward_reference(dims, moved.q.data(), moved.k.data(), moved.v.data(), moved.lambda_ptr(), out.data());
    double change = 0;
    for (int64_t x = 0; x < dims.out_width(); ++x)
      change = std::max(change, std::fabs(double(out[t * dims.out_width() + x]) - base[t * dims.out_width() + x]));
    if (inside)
      EXPECT_GT(change, 1e-4) << "key " << s << " is inside the window of query " << t;
    else
      EXPECT_EQ(change, 0.0) << "key " << s << " is outside the window of query " << t;
  }
}

TEST(SlidingWindow, BackwardAndQuantizedRefuseAWindow) {
  const AttentionDims dims{AttentionKind::diff, 1, 8, 2, 1, 16, 1, 4};
  const AttentionCase c = AttentionCase::random(dims, 5);
  std::vector<float> out(c.rows() * dims.out_width()), lse(attention_lse_floats(dims)),
      maps(attention_maps_out_floats(dims));
  std::vector<float> dq(c.q.size()), dk(c.k.size()), dv(c.v.size()), dl(1);
  const std::string backward = testing::error_of([&] {
    cpu().attention_backward(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(),
                             {lse.data(), maps.data()}, c.dout.data(), dq.data(), dk.data(), dv.data(), dl.data());
  });
  EXPECT_NE(backward.find("sliding window"), std::string::npos) << backward;
  const std::string quantized = testing::error_of(
      [&] { attention_forward_quantized(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(), 8); });
  EXPECT_NE(quantized.find("sliding window"), std::string::npos) << quantized;
  AttentionDims bad = dims;
  bad.window = -1;
  EXPECT_NE(testing::error_of([&] { bad.validate(); }).find("'window'"), std::string::npos);
  bad.window = (int64_t{1} << 32) + 5;  // a device's 32-bit push constant would read 5
  EXPECT_NE(testing::error_of([&] { bad.validate(); }).find("2^30"), std::string::npos);
  bad.window = int64_t{1} << 30;
  bad.validate();
}

// A cache of T tokens in decode_attention.h's layout, split into pages of P positions, from
// token-major k and v rows; positions before `first` hold NaN.
struct PagedCache {
  std::vector<std::vector<float>> keys, values;
  std::vector<const void*> key_pages, value_pages;
};
PagedCache paged_cache(const DecodeAttentionDims& page_dims, int64_t T, const std::vector<float>& k,
                       const std::vector<float>& v, int64_t first) {
  const int64_t P = page_dims.capacity, pages = (T + P - 1) / P, kw = page_dims.k_width(), vw = page_dims.v_width();
  PagedCache c;
  c.keys.assign(pages, std::vector<float>(key_elements(page_dims), kNan));
  c.values.assign(pages, std::vector<float>(page_dims.Hkv * P * page_dims.value_width(), kNan));
  for (int64_t t = first; t < T; ++t)
    for (int64_t g = 0; g < page_dims.Hkv; ++g) {
      for (int64_t x = 0; x < page_dims.key_width(); ++x)
        c.keys[t / P][key_offset(page_dims, g, t % P, x)] = k[t * kw + g * page_dims.key_width() + x];
      for (int64_t x = 0; x < page_dims.value_width(); ++x)
        c.values[t / P][(g * P + t % P) * page_dims.value_width() + x] = v[t * vw + g * page_dims.value_width() + x];
    }
  for (int64_t p = 0; p < pages; ++p) {  // pages wholly before the window are gone (null)
    const bool gone = (p + 1) * P <= first;
    c.key_pages.push_back(gone ? nullptr : c.keys[p].data());
    c.value_pages.push_back(gone ? nullptr : c.values[p].data());
  }
  return c;
}

TEST(SlidingWindow, DecodeMatchesTheLastRowOfTheWindowedPrefill) {
  int cases = 0, runs = 0;
  for (const WindowVariant& variant : kWindowVariants)
    for (int64_t T : {1, 20, 700})
      for (int64_t window : {1, 5, 16, 17, 300}) {
        const int64_t d = 16, Hkv = 2;
        const AttentionDims full{variant.kind, 1, T, variant.H, Hkv, d, variant.r, window};
        const AttentionCase c = AttentionCase::random(full, 700 + cases++);
        std::vector<float> prefill(T * full.out_width());
        attention_forward_reference(full, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), prefill.data());
        const std::vector<float> want(prefill.end() - full.out_width(), prefill.end());
        const float* q = c.q.data() + (T - 1) * full.q_width();
        for (int64_t P : {16, 32})  // KV pages of one and two key tiles
          for (int64_t max_chunks : {0, 1, 7}) {
            DecodeAttentionDims dims{{variant.kind, variant.H, Hkv, d, variant.r}, P};
            dims.window = window;
            const PagedCache cache = paged_cache(dims, T, c.k, c.v, dims.first_position(T));
            const LambdaSource source = dims.lambda_source();
            const float* lambda = source == LambdaSource::token_logits   ? c.lambda.data() + (T - 1) * variant.H
                                  : source == LambdaSource::layer_scalar ? c.lambda.data()
                                                                         : nullptr;
            DecodeAttentionScratch scratch(dims, max_chunks);
            std::vector<float> out(full.out_width(), kNan);
            const DecodeAttentionRow row{q, T, KvPages{cache.key_pages.data(), cache.value_pages.data()}, lambda,
                                         out.data()};
            cpu().decode_attention_rows(dims, {&row, 1}, scratch);
            const std::string where = std::string(attention_kind_name(variant.kind)) + " T=" + std::to_string(T) +
                                      " window=" + std::to_string(window) + " P=" + std::to_string(P) +
                                      " max_chunks=" + std::to_string(max_chunks);
            expect_close(out, want, 2e-6, 1e-5, where + " (against the prefill reference)");
            if (T <= P) {  // one page: the decode reference reads the same cache
              const auto exact =
                  decode_attention_reference(dims, T, q, cache.keys[0].data(), cache.values[0].data(), lambda);
              expect_close(out, std::vector<float>(exact.begin(), exact.end()), 2e-6, 1e-5,
                           where + " (decode reference)");
            }
            ++runs;
          }
      }
  EXPECT_EQ(cases, 60);
  EXPECT_EQ(runs, 360);
}

}  // namespace
}  // namespace difftx::kernels
