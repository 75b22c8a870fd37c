// The quantized-logit attention kernel (attention_quantized.h) against its double reference.
//
// Rounding to a level is discontinuous, so no tolerance covers a float/double difference that
// lands on the other side of a rounding boundary. The comparisons therefore use queries and
// keys on a grid of 1/8 in [-2, 2]: every product q . k is then exact in float and in double,
// both sides see the same absmax and pick the same levels, and what remains (scaling, softmax,
// the value sum) is smooth: |fused - ref| <= 1e-5 + 1e-5 |ref|. bits = 0 is compared with the
// plain attention on unrestricted random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>

#include "kernels/attention/attention_case.h"
#include "kernels/attention/attention_quantized.h"

namespace difftx::kernels {
namespace {

using testing::AttentionCase;
using testing::expect_close;

struct QuantizedShape {
  AttentionKind kind;
  int64_t B, T, H, Hkv, d;
  friend void PrintTo(const QuantizedShape& s, std::ostream* os) {
    *os << testing::describe({s.kind, s.B, s.T, s.H, s.Hkv, s.d});
  }
};

// q and k moved onto the 1/8 grid in [-2, 2] (see the header comment).
AttentionCase grid_case(const AttentionDims& dims, uint64_t seed) {
  AttentionCase c = AttentionCase::random(dims, seed, 2.0);
  for (auto* x : {&c.q, &c.k})
    for (float& v : *x) v = std::round(v * 8.0f) / 8.0f;
  for (float& v : c.k) v *= 2.0f;  // keys in [-2, 2] too: sharper maps, larger logits
  return c;
}

std::vector<float> run_fused(const AttentionCase& c, int bits) {
  std::vector<float> out(c.rows() * c.dims.out_width(), std::numeric_limits<float>::quiet_NaN());
  attention_forward_quantized(c.dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(), bits);
  return out;
}

std::vector<float> run_reference(const AttentionCase& c, int bits) {
  std::vector<float> out(c.rows() * c.dims.out_width());
  attention_forward_quantized_reference(c.dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(), bits);
  return out;
}

class QuantizedAttention : public ::testing::TestWithParam<QuantizedShape> {};

TEST_P(QuantizedAttention, MatchesReferenceAtEveryBitWidth) {
  const QuantizedShape s = GetParam();
  const AttentionDims dims{s.kind, s.B, s.T, s.H, s.Hkv, s.d};
  const AttentionCase c = grid_case(dims, 77 + s.T + s.d);
  const std::vector<float> plain = run_reference(c, 0);
  for (int bits : {16, 8, 6, 4, 2}) {
    SCOPED_TRACE(testing::describe(dims) + " bits=" + std::to_string(bits));
    const std::vector<float> want = run_reference(c, bits);
    expect_close(run_fused(c, bits), want, 1e-5, 1e-5, "out");
    // Coarse quantization must change the result (a kernel that ignored `bits` would pass the
    // comparison above only if the reference ignored it too).
    if (bits <= 4 && s.T > 1) {
      EXPECT_GT(testing::max_abs_diff(want, plain), 1e-3) << "quantization had no effect";
    }
  }
}

TEST_P(QuantizedAttention, ZeroBitsIsThePlainAttention) {
  const QuantizedShape s = GetParam();
  const AttentionDims dims{s.kind, s.B, s.T, s.H, s.Hkv, s.d};
  const AttentionCase c = AttentionCase::random(dims, 5 + s.T);
  std::vector<float> plain(c.rows() * dims.out_width());
  attention_forward_reference(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), plain.data());
  expect_close(run_fused(c, 0), plain, 5e-6, 1e-5, "bits=0 vs attention_forward_reference");
  expect_close(run_reference(c, 0), plain, 0, 0, "reference bits=0 vs attention_forward_reference");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, QuantizedAttention,
    ::testing::Values(QuantizedShape{AttentionKind::baseline, 2, 1, 2, 1, 32},
                      QuantizedShape{AttentionKind::baseline, 1, 65, 4, 1, 64},
                      QuantizedShape{AttentionKind::baseline, 2, 70, 2, 2, 24},
                      QuantizedShape{AttentionKind::diff, 1, 1, 2, 2, 16},
                      QuantizedShape{AttentionKind::diff, 2, 63, 2, 1, 32},
                      QuantizedShape{AttentionKind::diff, 1, 129, 4, 2, 16},
                      QuantizedShape{AttentionKind::diff2, 1, 100, 4, 2, 24},
                      QuantizedShape{AttentionKind::diff2, 3, 90, 2, 1, 128},
                      QuantizedShape{AttentionKind::diff2, 1, 127, 4, 1, 64}),
    [](const ::testing::TestParamInfo<QuantizedShape>& info) {
      const QuantizedShape& s = info.param;
      return std::string(attention_kind_name(s.kind)) + "_B" + std::to_string(s.B) + "_T" + std::to_string(s.T) +
             "_H" + std::to_string(s.H) + "_Hkv" + std::to_string(s.Hkv) + "_d" + std::to_string(s.d);
    });

TEST(AbsmaxQuantizer, RoundsToSymmetricLevels) {
  const AbsmaxQuantizer four(7.0, 4);  // 7 levels per sign: step 1
  EXPECT_EQ(four.step(), 1.0);
  EXPECT_EQ(four(3.4), 3.0);
  EXPECT_EQ(four(3.5), 4.0);  // half to even
  EXPECT_EQ(four(2.5), 2.0);
  EXPECT_EQ(four(-6.6), -7.0);
  EXPECT_EQ(four(7.0), 7.0);
  EXPECT_EQ(four(0.49), 0.0);
  const AbsmaxQuantizer eight(2.54, 8);  // 127 levels: step 0.02
  EXPECT_NEAR(eight(1.0), 1.0, 1e-12);
  EXPECT_NEAR(eight(1.011), 1.02, 1e-12);
  EXPECT_NEAR(eight(-2.54), -2.54, 1e-12);
  const AbsmaxQuantizer two(3.0, 2);  // one level per sign: -3, 0, 3
  EXPECT_EQ(two(1.4), 0.0);
  EXPECT_EQ(two(1.6), 3.0);
  EXPECT_EQ(two(-2.0), -3.0);
  EXPECT_EQ(AbsmaxQuantizer(5.0, 0)(1.2345), 1.2345);  // bits 0: identity
  EXPECT_EQ(AbsmaxQuantizer(0.0, 4)(0.0), 0.0);         // an all-zero map stays zero
  EXPECT_TRUE(std::isnan(AbsmaxQuantizer(INFINITY, 4)(1.0)));
}

TEST(QuantizedAttentionErrors, NameTheProblem) {
  for (int bits : {-1, 1, 17, 32})
    EXPECT_NE(testing::error_of([&] { check_logit_bits(bits); }).find("between 2 and 16, got " + std::to_string(bits)),
              std::string::npos);
  const AttentionDims dims{AttentionKind::diff, 1, 4, 1, 1, 8};
  const AttentionCase c = AttentionCase::random(dims, 1);
  std::vector<float> out(c.rows() * dims.out_width());
  EXPECT_NE(testing::error_of([&] {
              attention_forward_quantized(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(), 20);
            }).find("got 20"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] {
              attention_forward_quantized(dims, c.q.data(), c.k.data(), c.v.data(), nullptr, out.data(), 8);
            }).find("lambda must not be null"),
            std::string::npos);
}

}  // namespace
}  // namespace difftx::kernels
