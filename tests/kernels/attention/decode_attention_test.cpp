// Single-query attention over the KV cache: the fused split-KV kernel against its double
// reference twin on awkward shapes, and the reference against the last row of the prefill
// reference (attention.h), so both decode paths mean what docs/SPEC.md §2 means.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "io/float16.h"
#include "kernels/attention/decode_attention.h"
#include "reference/attention_reference.h"
#include "reference/decode_attention_reference.h"
#include "support/level_kernels.h"
#include "support/testing.h"

namespace difftx::kernels {
namespace {

// The variants the tests run, each with its query heads (diff_grouped: r = 2, so that kv heads
// 4, 2 and 1 each serve whole groups of its 4 noise heads).
struct DecodeVariant {
  AttentionKind kind;
  int64_t H, r;
};
const DecodeVariant kDecodeVariants[] = {{AttentionKind::baseline, 4, 1},
                             {AttentionKind::diff, 4, 1},
                             {AttentionKind::diff2, 4, 1},
                             {AttentionKind::diff_grouped, 8, 2}};

struct DecodeCase {
  DecodeAttentionDims dims;
  int64_t length;
  std::vector<float> q, keys, values, lambda;

  // Cache rows at and past `length` hold NaN: reading one would poison the output.
  static DecodeCase random(AttentionKind kind, int64_t H, int64_t Hkv, int64_t d, int64_t length, uint64_t seed,
                           int64_t r = 1) {
    const DecodeAttentionDims dims{{kind, H, Hkv, d, r}, length + 5};
    DecodeCase c{dims, length, {}, {}, {}, {}};
    Rng rng(seed);
    c.q = testing::random_vector(dims.attention_dims().q_width(), rng, -3, 3);  // sharp maps
    c.keys.assign(key_elements(dims), std::numeric_limits<float>::quiet_NaN());
    c.values.assign(Hkv * dims.capacity * dims.value_width(), std::numeric_limits<float>::quiet_NaN());
    for (int64_t g = 0; g < Hkv; ++g)
      for (int64_t t = 0; t < length; ++t) {
        for (int64_t x = 0; x < dims.key_width(); ++x)
          c.keys[key_offset(dims, g, t, x)] = static_cast<float>(rng.uniform(-1, 1));
        for (int64_t x = 0; x < dims.value_width(); ++x)
          c.values[(g * dims.capacity + t) * dims.value_width() + x] = static_cast<float>(rng.uniform(-1, 1));
      }
    if (dims.lambda_source() == LambdaSource::layer_scalar) c.lambda = testing::random_vector(1, rng, 0.2, 0.8);
    if (dims.lambda_source() == LambdaSource::token_logits) c.lambda = testing::random_vector(H, rng, -2, 2);
    return c;
  }
  const float* lambda_ptr() const { return lambda.empty() ? nullptr : lambda.data(); }
};

std::string describe(const DecodeCase& c, int64_t max_chunks) {
  return std::string(attention_kind_name(c.dims.kind)) + " H=" + std::to_string(c.dims.H) +
         " Hkv=" + std::to_string(c.dims.Hkv) + " d=" + std::to_string(c.dims.d) +
         " length=" + std::to_string(c.length) + " max_chunks=" + std::to_string(max_chunks);
}

TEST(DecodeAttention, FusedMatchesReferenceOnAwkwardShapes) {
  const int64_t widths[] = {32, 64, 128};
  int cases = 0;
  for (const DecodeVariant& variant : kDecodeVariants)
    for (int64_t Hkv : {4, 2, 1})
      for (int64_t length : {1, 63, 1000})
        for (int64_t max_chunks : {0, 1, 7}) {  // 0: the thread-based default
          const int64_t d = widths[cases % 3];
          const DecodeCase c =
              DecodeCase::random(variant.kind, variant.H, Hkv, d, length, 100 + cases++, variant.r);
          DecodeAttentionScratch scratch(c.dims, max_chunks);
          std::vector<float> out(c.dims.attention_dims().out_width());
          decode_attention(c.dims, c.length, c.q.data(), c.keys.data(), c.values.data(), c.lambda_ptr(), out.data(),
                           scratch);
          const auto want = decode_attention_reference(c.dims, c.length, c.q.data(), c.keys.data(), c.values.data(),
                                                       c.lambda_ptr());
          double err = 0;
          for (size_t i = 0; i < out.size(); ++i) err = std::max(err, std::fabs(out[i] - want[i]));
          EXPECT_LT(err, 2e-6) << describe(c, max_chunks);  // |outputs| <= 2, float32 sums
          if (max_chunks == 7 && length == 1000) {
            EXPECT_GT(decode_attention_chunks(scratch, length), 1);
          }
        }
  EXPECT_EQ(cases, 108);
}

// A BF16 cache: the same case's keys and values rounded to BF16 (NaN rows stay NaN), read by the
// kernel and by the reference from the very same bits.
TEST(DecodeAttention, Bf16CacheMatchesReferenceOnTheSameBits) {
  int cases = 0;
  for (const DecodeVariant& variant : kDecodeVariants)
    for (int64_t Hkv : {4, 1})
      for (int64_t length : {1, 17, 700})
        for (int64_t max_chunks : {0, 3}) {
          DecodeCase c =
              DecodeCase::random(variant.kind, variant.H, Hkv, 16 << (cases % 3), length, 500 + cases, variant.r);
          ++cases;
          c.dims.storage = KvStorage::bf16;
          std::vector<uint16_t> keys(c.keys.size()), values(c.values.size());
          for (size_t i = 0; i < keys.size(); ++i) keys[i] = io::float_to_bf16(c.keys[i]);
          for (size_t i = 0; i < values.size(); ++i) values[i] = io::float_to_bf16(c.values[i]);
          DecodeAttentionScratch scratch(c.dims, max_chunks);
          std::vector<float> out(c.dims.attention_dims().out_width());
          decode_attention(c.dims, length, c.q.data(), keys.data(), values.data(), c.lambda_ptr(), out.data(), scratch);
          const auto want = decode_attention_reference(c.dims, length, c.q.data(), keys.data(), values.data(),
                                                       c.lambda_ptr());
          double err = 0;
          for (size_t i = 0; i < out.size(); ++i) err = std::max(err, std::fabs(out[i] - want[i]));
          EXPECT_LT(err, 2e-6) << describe(c, max_chunks) << " bf16";
          // The F32 reference of the unrounded cache is further away: the rounding is real.
          const auto exact = decode_attention_reference(DecodeAttentionDims{static_cast<const AttentionVariant&>(c.dims), c.dims.capacity},
                                                        length, c.q.data(), c.keys.data(), c.values.data(),
                                                        c.lambda_ptr());
          double moved = 0;
          for (size_t i = 0; i < out.size(); ++i) moved = std::max(moved, std::fabs(exact[i] - want[i]));
          EXPECT_GT(moved, 1e-5) << describe(c, max_chunks);
          EXPECT_LT(moved, 3e-2) << describe(c, max_chunks);  // 2^-9 relative per element, |q| <= 3
        }
  EXPECT_EQ(cases, 48);
  EXPECT_EQ(parse_kv_storage("bf16"), KvStorage::bf16);
  EXPECT_EQ(parse_kv_storage("int8"), KvStorage::int8);
  EXPECT_NE(testing::error_of([] { parse_kv_storage("fp8"); }).find("expected f32, bf16 or int8"), std::string::npos);
}

// An INT8 cache written by store_kv (the KV cache's one writer) from the case's token-major rows:
// the kernel and the reference read the very same integers and scales; both are within INT8's
// rounding of the F32 cache, and the rounding is real. Rows past `length` stay unwritten.
TEST(DecodeAttention, Int8CacheMatchesReferenceOnTheSameBits) {
  int cases = 0;
  for (const DecodeVariant& variant : kDecodeVariants)
    for (int64_t Hkv : {4, 1})
      for (int64_t length : {1, 17, 700})
        for (int64_t max_chunks : {0, 3}) {
          const DecodeCase c =
              DecodeCase::random(variant.kind, variant.H, Hkv, 16 << (cases % 3), length, 900 + cases, variant.r);
          ++cases;
          DecodeAttentionDims dims = c.dims;
          dims.storage = KvStorage::int8;
          const int64_t kw = dims.key_width(), vw = dims.value_width();
          std::vector<float> k(length * Hkv * kw), v(length * Hkv * vw);
          for (int64_t t = 0; t < length; ++t)
            for (int64_t g = 0; g < Hkv; ++g) {
              for (int64_t x = 0; x < kw; ++x) k[(t * Hkv + g) * kw + x] = c.keys[key_offset(dims, g, t, x)];
              for (int64_t x = 0; x < vw; ++x) v[(t * Hkv + g) * vw + x] = c.values[(g * dims.capacity + t) * vw + x];
            }
          std::vector<unsigned char> keys(key_region_bytes(dims)), values(value_region_bytes(dims));
          EXPECT_EQ(keys.size() % 64, 0u);
          EXPECT_GE(keys.size(), static_cast<size_t>(key_elements(dims) + 4 * Hkv * dims.key_heads_per_kv_head() * length));
          store_kv(dims, keys.data(), values.data(), 0, length, k.data(), v.data());
          DecodeAttentionScratch scratch(dims, max_chunks);
          std::vector<float> out(dims.attention_dims().out_width());
          decode_attention(dims, length, c.q.data(), keys.data(), values.data(), c.lambda_ptr(), out.data(), scratch);
          const auto want =
              decode_attention_reference(dims, length, c.q.data(), keys.data(), values.data(), c.lambda_ptr());
          const auto exact = decode_attention_reference(c.dims, length, c.q.data(), c.keys.data(), c.values.data(),
                                                        c.lambda_ptr());
          double err = 0, moved = 0;
          for (size_t i = 0; i < out.size(); ++i) {
            err = std::max(err, std::fabs(out[i] - want[i]));
            moved = std::max(moved, std::fabs(exact[i] - want[i]));
          }
          EXPECT_LT(err, 2e-6) << describe(c, max_chunks) << " int8";
          EXPECT_GT(moved, 1e-5) << describe(c, max_chunks);
          EXPECT_LT(moved, 6e-2) << describe(c, max_chunks);  // 1/254 of a row's largest |x| per element
        }
  EXPECT_EQ(cases, 48);
}

TEST(DecodeAttention, ReferenceEqualsLastRowOfPrefillReference) {
  // Lay T tokens out token-major as the projections do, run the prefill reference, and read
  // the same tokens through the cache layout: the last query row must agree.
  const int64_t T = 37, d = 16;
  for (const auto& [kind, H, r] : kDecodeVariants)
    for (int64_t Hkv : {4, 2, 1}) {
      const AttentionDims full{kind, 1, T, H, Hkv, d, r};
      const DecodeAttentionDims dims{{kind, H, Hkv, d, r}, T};
      Rng rng(7 + Hkv);
      const auto q = testing::random_vector(T * full.q_width(), rng, -3, 3);
      const auto k = testing::random_vector(T * full.k_width(), rng);
      const auto v = testing::random_vector(T * full.v_width(), rng);
      std::vector<float> lambda;
      const LambdaSource source = dims.lambda_source();
      if (source == LambdaSource::layer_scalar) lambda = {0.37f};
      if (source == LambdaSource::token_logits) lambda = testing::random_vector(T * H, rng, -2, 2);
      std::vector<float> out(T * full.out_width());
      attention_forward_reference(full, q.data(), k.data(), v.data(), lambda.empty() ? nullptr : lambda.data(),
                                  out.data());
      std::vector<float> keys(key_elements(dims)), values(Hkv * T * dims.value_width());
      for (int64_t t = 0; t < T; ++t)
        for (int64_t g = 0; g < Hkv; ++g) {
          for (int64_t x = 0; x < dims.key_width(); ++x)
            keys[key_offset(dims, g, t, x)] = k[t * full.k_width() + g * dims.key_width() + x];
          for (int64_t x = 0; x < dims.value_width(); ++x)
            values[(g * T + t) * dims.value_width() + x] = v[t * full.v_width() + g * dims.value_width() + x];
        }
      const float* last_lambda = source == LambdaSource::token_logits ? lambda.data() + (T - 1) * H
                                 : source == LambdaSource::layer_scalar ? lambda.data() : nullptr;
      const auto got = decode_attention_reference(dims, T, q.data() + (T - 1) * full.q_width(), keys.data(),
                                                  values.data(), last_lambda);
      for (int64_t x = 0; x < full.out_width(); ++x)
        ASSERT_NEAR(got[x], out[(T - 1) * full.out_width() + x], 1e-6)
            << attention_kind_name(kind) << " Hkv=" << Hkv << " column " << x;
    }
}

TEST(DecodeAttention, BadArgumentsAreClearErrors) {
  const DecodeCase c = DecodeCase::random(AttentionKind::diff, 4, 2, 16, 10, 3);
  DecodeAttentionScratch scratch(c.dims);
  std::vector<float> out(c.dims.attention_dims().out_width());
  auto run = [&](int64_t length, const float* lambda) {
    decode_attention(c.dims, length, c.q.data(), c.keys.data(), c.values.data(), lambda, out.data(), scratch);
  };
  EXPECT_THROW(run(0, c.lambda_ptr()), Error);
  try {
    run(c.dims.capacity + 1, c.lambda_ptr());
    ADD_FAILURE() << "a length past the capacity was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("capacity"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run(10, nullptr), Error);  // diff needs lambda
  EXPECT_THROW(DecodeAttentionScratch(DecodeAttentionDims{{AttentionKind::diff2, 3, 2, 16}, 8}), Error);  // H % Hkv != 0
  EXPECT_THROW(DecodeAttentionScratch(DecodeAttentionDims{{AttentionKind::diff_grouped, 4, 4, 16, 2}, 8}), Error);  // 2 noise heads, 4 kv heads
}

}  // namespace
}  // namespace difftx::kernels
