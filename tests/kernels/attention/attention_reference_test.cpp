// The double-precision reference itself: its gradients against central finite differences, and
// its semantics against docs/SPEC.md §2 built from independent pieces (T = 1 closed forms; diff and
// diff2 rebuilt from baseline maps, which also pins the GQA pairing and V2's adjacent pairs).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <ostream>

#include "backends/cpu/cpu_kernels.h"
#include "kernels/attention/attention_case.h"
#include "kernels/attention/flash.h"

namespace difftx::kernels {
namespace {

using testing::AttentionCase;
using testing::to_double;

struct DoubleCase {
  AttentionDims dims;
  std::vector<double> q, k, v, lambda, dout;
  explicit DoubleCase(const AttentionCase& c)
      : dims(c.dims), q(to_double(c.q)), k(to_double(c.k)), v(to_double(c.v)), lambda(to_double(c.lambda)),
        dout(to_double(c.dout)) {}
  std::vector<double> forward() const {
    std::vector<double> out(dims.B * dims.T * dims.out_width());
    attention_forward_reference(dims, q.data(), k.data(), v.data(), lambda.data(), out.data());
    return out;
  }
  double loss() const {  // sum(out o dout): its gradient is the backward of dout
    const auto out = forward();
    double sum = 0;
    for (size_t i = 0; i < out.size(); ++i) sum += out[i] * dout[i];
    return sum;
  }
};

void expect_gradient(const std::vector<double>& analytic, std::vector<double>& x, const DoubleCase& c,
                     const char* name) {
  const auto numeric = testing::finite_difference(x, [&] { return c.loss(); }, 1e-6);
  ASSERT_EQ(analytic.size(), numeric.size());
  double worst = 0;
  for (size_t i = 0; i < numeric.size(); ++i) {
    EXPECT_NEAR(analytic[i], numeric[i], 1e-7 + 1e-6 * std::fabs(numeric[i])) << name << "[" << i << "]";
    worst = std::max(worst, std::fabs(numeric[i]));
  }
  EXPECT_GT(worst, 1e-3) << name << ": gradient is (nearly) zero, the check would be vacuous";
}

struct Variant {
  AttentionKind kind;
  int64_t H = 2, Hkv = 1, r = 1;
  friend void PrintTo(const Variant& v, std::ostream* os) { *os << attention_kind_name(v.kind) << " r=" << v.r; }
};

class ReferenceGradients : public ::testing::TestWithParam<Variant> {};

TEST_P(ReferenceGradients, MatchFiniteDifferencesInDouble) {
  // B = 2, T = 5, n_rep = 2 (diff_grouped: noise heads per kv head 2 or 1), d = 4: small enough for
  // an FD of every input element.
  const Variant p = GetParam();
  const AttentionDims dims{p.kind, 2, 5, p.H, p.Hkv, 4, p.r};
  DoubleCase c(AttentionCase::random(dims, 11, 1.5));
  std::vector<double> dq(c.q.size()), dk(c.k.size()), dv(c.v.size()), dl(c.lambda.size());
  attention_backward_reference(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda.data(), c.dout.data(), dq.data(),
                               dk.data(), dv.data(), dl.data());
  expect_gradient(dq, c.q, c, "dq");
  expect_gradient(dk, c.k, c, "dk");
  expect_gradient(dv, c.v, c, "dv");
  if (dims.kind != AttentionKind::baseline) expect_gradient(dl, c.lambda, c, "dlambda");
}

INSTANTIATE_TEST_SUITE_P(Variants, ReferenceGradients,
                         ::testing::Values(Variant{AttentionKind::baseline}, Variant{AttentionKind::diff},
                                           Variant{AttentionKind::diff2}, Variant{AttentionKind::diff_grouped, 4, 1, 2},
                                           Variant{AttentionKind::diff_grouped, 6, 2, 3}),
                         [](const auto& info) {
                           return std::string(attention_kind_name(info.param.kind)) + "_r" + std::to_string(info.param.r);
                         });

// With one token every softmax is 1: baseline gives v_g, diff (1 - lambda) v_g, diff2
// (1 - sigmoid(logit)) v_g, for head i in kv group g = i / n_rep.
TEST(AttentionReference, SingleTokenClosedForms) {
  for (AttentionKind kind : {AttentionKind::baseline, AttentionKind::diff, AttentionKind::diff2}) {
    const AttentionDims dims{kind, 1, 1, 4, 2, 3};
    const DoubleCase c(AttentionCase::random(dims, 3));
    const auto out = c.forward();
    const int64_t dv = kind == AttentionKind::diff ? 2 * dims.d : dims.d;
    for (int64_t i = 0; i < dims.H; ++i) {
      const int64_t g = i / 2;
      double w = 0;
      if (kind == AttentionKind::diff) w = c.lambda[0];
      if (kind == AttentionKind::diff2) w = 1 / (1 + std::exp(-c.lambda[i]));
      for (int64_t x = 0; x < dv; ++x)
        EXPECT_NEAR(out[i * dv + x], (1 - w) * c.v[g * dv + x], 1e-12) << attention_kind_name(kind) << " head " << i;
    }
  }
}

// Gathers sub-heads: head h of the result is columns [(stride*h + offset)*d, +d) of x.
std::vector<double> sub_heads(const std::vector<double>& x, int64_t row_width, int64_t heads, int64_t stride,
                              int64_t offset, int64_t d) {
  std::vector<double> out;
  for (size_t r = 0; r < x.size() / row_width; ++r)
    for (int64_t h = 0; h < heads; ++h) {
      const auto first = x.begin() + r * row_width + (stride * h + offset) * d;
      out.insert(out.end(), first, first + d);
    }
  return out;
}

std::vector<double> baseline_out(const AttentionDims& dims, const std::vector<double>& q, const std::vector<double>& k,
                                 const std::vector<double>& v) {
  std::vector<double> out(dims.B * dims.T * dims.out_width());
  attention_forward_reference(dims, q.data(), k.data(), v.data(), nullptr, out.data());
  return out;
}

// docs/SPEC.md §2.2: head i = (softmax(q1_i k1_g^T) - lambda softmax(q2_i k2_g^T)) v_g with g = i / n_rep,
// q laid out [q1|q2] per head and k [k1|k2] per kv head; rebuilt from baseline maps.
TEST(AttentionReference, DiffIsTwoBaselineMapsWithGroupPairing) {
  const int64_t B = 2, T = 9, H = 4, Hkv = 2, d = 3;
  const AttentionDims dims{AttentionKind::diff, B, T, H, Hkv, d};
  const DoubleCase c(AttentionCase::random(dims, 21));
  const auto out = c.forward();
  const AttentionDims base{AttentionKind::baseline, B, T, H, Hkv, d};
  const double lambda = c.lambda[0];
  for (int64_t half = 0; half < 2; ++half) {  // the value's two d-wide halves
    std::vector<double> v_half;
    for (size_t r = 0; r < c.v.size() / (Hkv * 2 * d); ++r)
      for (int64_t g = 0; g < Hkv; ++g) {
        const auto first = c.v.begin() + r * Hkv * 2 * d + g * 2 * d + half * d;
        v_half.insert(v_half.end(), first, first + d);
      }
    const auto a1 = baseline_out(base, sub_heads(c.q, 2 * H * d, H, 2, 0, d), sub_heads(c.k, 2 * Hkv * d, Hkv, 2, 0, d), v_half);
    const auto a2 = baseline_out(base, sub_heads(c.q, 2 * H * d, H, 2, 1, d), sub_heads(c.k, 2 * Hkv * d, Hkv, 2, 1, d), v_half);
    for (int64_t r = 0; r < B * T; ++r)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t x = 0; x < d; ++x)
          EXPECT_NEAR(out[(r * H + i) * 2 * d + half * d + x], a1[(r * H + i) * d + x] - lambda * a2[(r * H + i) * d + x],
                      1e-12);
  }
}

// docs/SPEC.md §2.3: out_i = a_{2i} - sigmoid(logit_i) a_{2i+1} over ADJACENT query heads. Both the
// reference and the fused kernel must match the adjacent pairing of baseline maps, and a
// half-split pairing (a_i with a_{i+H}) must give a clearly different output.
TEST(AttentionReference, Diff2PairsAdjacentQueryHeads) {
  const int64_t B = 2, T = 17, H = 2, Hkv = 2, d = 16;
  const AttentionDims dims{AttentionKind::diff2, B, T, H, Hkv, d};
  const AttentionCase fc = AttentionCase::random(dims, 31);
  const DoubleCase c(fc);
  const auto out = c.forward();
  const auto a = baseline_out({AttentionKind::baseline, B, T, 2 * H, Hkv, d}, c.q, c.k, c.v);  // [B, T, 2H, d]

  std::vector<float> fused(out.size()), lse(attention_lse_floats(dims)), maps_out(attention_maps_out_floats(dims));
  backends::cpu::kernels().attention_forward(dims, fc.q.data(), fc.k.data(), fc.v.data(), fc.lambda.data(), fused.data(),
                    {lse.data(), maps_out.data()});

  double adjacent_err = 0, fused_err = 0, half_split_gap = 0;
  for (int64_t r = 0; r < B * T; ++r)
    for (int64_t i = 0; i < H; ++i) {
      const double w = 1 / (1 + std::exp(-c.lambda[r * H + i]));
      for (int64_t x = 0; x < d; ++x) {
        const double adjacent = a[(r * 2 * H + 2 * i) * d + x] - w * a[(r * 2 * H + 2 * i + 1) * d + x];
        const double half_split = a[(r * 2 * H + i) * d + x] - w * a[(r * 2 * H + i + H) * d + x];
        const double got = out[(r * H + i) * d + x];
        adjacent_err = std::max(adjacent_err, std::fabs(got - adjacent));
        fused_err = std::max(fused_err, std::fabs(fused[(r * H + i) * d + x] - adjacent));
        half_split_gap = std::max(half_split_gap, std::fabs(got - half_split));
      }
    }
  EXPECT_LT(adjacent_err, 1e-12);
  EXPECT_LT(fused_err, 1e-5);
  EXPECT_GT(half_split_gap, 0.05) << "a half-split pairing would give the same output: the test cannot tell them apart";
}

// docs/SPEC.md §2.5: grouped head i = (softmax(qs_i k1_g^T) - lambda softmax(qn_{i/r} k2_g^T)) v_g, with
// query heads in groups of r + 1 (r signal, then noise) and g = (i / r) / (N / Hkv). That is DIFF V1
// whose head i has q1 = the signal query of head i and q2 = a copy of its group's noise query: the
// reference and the fused kernel both must give that, and r = 1 must be DIFF V1 bit for bit.
TEST(AttentionReference, GroupedIsDiffWithTheNoiseQueryShared) {
  const int64_t B = 2, T = 70, H = 6, Hkv = 2, d = 16, r = 3;
  const AttentionDims dims{AttentionKind::diff_grouped, B, T, H, Hkv, d, r};
  const AttentionCase fc = AttentionCase::random(dims, 41);
  AttentionCase as_diff = fc;
  as_diff.dims = {AttentionKind::diff, B, T, H, Hkv, d};
  as_diff.q.clear();
  for (int64_t row = 0; row < B * T; ++row)
    for (int64_t i = 0; i < H; ++i)
      for (int64_t part : {i / r * (r + 1) + i % r, i / r * (r + 1) + r}) {  // [q_signal | q_noise]
        const auto first = fc.q.begin() + row * dims.q_width() + part * d;
        as_diff.q.insert(as_diff.q.end(), first, first + d);
      }
  const auto want = DoubleCase(as_diff).forward();
  const auto got = DoubleCase(fc).forward();
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12) << "reference, element " << i;

  std::vector<float> fused(want.size()), lse(attention_lse_floats(dims)), maps_out(attention_maps_out_floats(dims));
  backends::cpu::kernels().attention_forward(dims, fc.q.data(), fc.k.data(), fc.v.data(), fc.lambda.data(), fused.data(),
                    {lse.data(), maps_out.data()});
  testing::expect_close(fused, std::vector<float>(want.begin(), want.end()), 5e-6, 1e-5, "fused grouped vs diff");

  // r = 1: the same tensors through diff and diff_grouped give identical bits.
  const AttentionDims v1{AttentionKind::diff, B, T, H, Hkv, d}, g1{AttentionKind::diff_grouped, B, T, H, Hkv, d, 1};
  const AttentionCase c1 = AttentionCase::random(v1, 43);
  auto run = [&](const AttentionDims& a) {
    std::vector<float> out(B * T * a.out_width()), l(attention_lse_floats(a)), m(attention_maps_out_floats(a));
    backends::cpu::kernels().attention_forward(a, c1.q.data(), c1.k.data(), c1.v.data(), c1.lambda.data(), out.data(), {l.data(), m.data()});
    std::vector<float> dq(c1.q.size()), dk(c1.k.size()), dv(c1.v.size()), dl(1);
    backends::cpu::kernels().attention_backward(a, c1.q.data(), c1.k.data(), c1.v.data(), c1.lambda.data(), out.data(), {l.data(), m.data()},
                       c1.dout.data(), dq.data(), dk.data(), dv.data(), dl.data());
    for (const auto* x : {&dq, &dk, &dv, &dl}) out.insert(out.end(), x->begin(), x->end());
    return out;
  };
  EXPECT_EQ(run(g1), run(v1));
}

}  // namespace
}  // namespace difftx::kernels
