// The fused flash kernels (both tile paths) against the double-precision reference, forward and
// backward, on awkward shapes: T = 1, tile-straddling T, T = 1000; GQA n_rep 1, 2, 4; d = 32,
// 64, 128 (and d = 24, which only the scalar path runs); B > 1.
//
// Tolerances (inputs in [-1, 1], queries in [-3, 3]; fp32 kernels vs a double reference; the
// largest errors seen are ~5e-7 for out and ~4e-6 for the gradients, |values| up to ~35):
//   out:              |fused - ref| <= 5e-6 + 1e-5 |ref|
//   dq, dk, dv:       |fused - ref| <= 2e-5 + 1e-4 |ref|
//   dlambda (diff2):  as dq; dlambda (diff, diff_grouped: a sum over all B*T*H*2d terms): 1e-4 + 1e-5 |ref|
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>

#include "backends/cpu/cpu_kernels.h"
#include "kernels/attention/attention_case.h"
#include "kernels/attention/flash.h"
#include "backends/cpu/cpu_level.h"

namespace difftx::kernels {
namespace {

using testing::AttentionCase;
using testing::expect_close;

struct Shape {
  AttentionKind kind;
  int64_t B, T, H, Hkv, d, r = 1;
  friend void PrintTo(const Shape& s, std::ostream* os) {
    *os << testing::describe({s.kind, s.B, s.T, s.H, s.Hkv, s.d, s.r});
  }
};

const char* path_name(flash::Path p) { return p == flash::Path::simd ? cpu_level_name(cpu_level()) : "scalar"; }

class FusedAttention : public ::testing::TestWithParam<Shape> {};

TEST_P(FusedAttention, MatchesReferenceForwardAndBackward) {
  const Shape s = GetParam();
  const AttentionDims dims{s.kind, s.B, s.T, s.H, s.Hkv, s.d, s.r};
  const AttentionCase c = AttentionCase::random(dims, 1000 + s.T * 7 + s.d);
  const int64_t N = c.rows();
  const float nan = std::numeric_limits<float>::quiet_NaN();

  std::vector<float> ref_out(N * dims.out_width());
  attention_forward_reference(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), ref_out.data());
  std::vector<float> ref_dq(c.q.size()), ref_dk(c.k.size()), ref_dv(c.v.size()), ref_dl(c.lambda.size());
  attention_backward_reference(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), c.dout.data(),
                               ref_dq.data(), ref_dk.data(), ref_dv.data(), ref_dl.data());

  for (flash::Path path : testing::flash_paths(dims)) {
    SCOPED_TRACE(testing::describe(dims) + " path=" + path_name(path));
    // Outputs start as NaN: the kernels must overwrite every element.
    std::vector<float> out(N * dims.out_width(), nan), lse(attention_lse_floats(dims), nan);
    std::vector<float> maps_out(attention_maps_out_floats(dims), nan);
    AttentionSaved saved{lse.data(), maps_out.empty() ? nullptr : maps_out.data()};
    backends::cpu::kernels().flash_forward(path, dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(), saved);
    expect_close(out, ref_out, 5e-6, 1e-5, "out");

    std::vector<float> dq(c.q.size(), nan), dk(c.k.size(), nan), dv(c.v.size(), nan), dl(c.lambda.size(), nan);
    backends::cpu::kernels().flash_backward(path, dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(), saved,
                    c.dout.data(), dq.data(), dk.data(), dv.data(), dl.empty() ? nullptr : dl.data());
    expect_close(dq, ref_dq, 2e-5, 1e-4, "dq");
    expect_close(dk, ref_dk, 2e-5, 1e-4, "dk");
    expect_close(dv, ref_dv, 2e-5, 1e-4, "dv");
    const LambdaSource source = dims.variant().lambda_source();
    if (source == LambdaSource::layer_scalar) expect_close(dl, ref_dl, 1e-4, 1e-5, "dlambda");
    if (source == LambdaSource::token_logits) expect_close(dl, ref_dl, 2e-5, 1e-4, "dlambda (logits)");
  }
}

// n_rep = H / Hkv covers 1, 2 and 4 for every variant. The backward runs whole (batch, kv group)
// items when B * Hkv >= 4 * threads (with ctest's 2 threads: baseline_B2_T100 and diff_B4_T80),
// else key tiles spread over threads with private dq copies (all other cases).
INSTANTIATE_TEST_SUITE_P(
    Shapes, FusedAttention,
    ::testing::Values(Shape{AttentionKind::baseline, 2, 1, 2, 1, 32}, Shape{AttentionKind::baseline, 1, 63, 4, 1, 64},
                      Shape{AttentionKind::baseline, 1, 65, 2, 1, 128}, Shape{AttentionKind::baseline, 2, 127, 2, 2, 32},
                      Shape{AttentionKind::baseline, 1, 1000, 2, 2, 64}, Shape{AttentionKind::baseline, 2, 100, 4, 4, 32},
                      Shape{AttentionKind::baseline, 1, 70, 2, 1, 24},
                      Shape{AttentionKind::diff, 2, 1, 2, 2, 128}, Shape{AttentionKind::diff, 2, 65, 2, 1, 32},
                      Shape{AttentionKind::diff, 1, 127, 4, 1, 64}, Shape{AttentionKind::diff, 1, 63, 2, 2, 128},
                      Shape{AttentionKind::diff, 1, 1000, 1, 1, 32}, Shape{AttentionKind::diff, 4, 80, 2, 2, 16},
                      Shape{AttentionKind::diff, 16, 64, 2, 1, 16}, Shape{AttentionKind::baseline, 16, 64, 4, 2, 16},
                      Shape{AttentionKind::diff2, 1, 1, 1, 1, 64}, Shape{AttentionKind::diff2, 2, 63, 2, 2, 128},
                      Shape{AttentionKind::diff2, 1, 127, 4, 2, 32}, Shape{AttentionKind::diff2, 1, 65, 4, 1, 64},
                      Shape{AttentionKind::diff2, 1, 1000, 1, 1, 32}, Shape{AttentionKind::diff2, 3, 90, 2, 1, 48},
                      // diff_grouped: r = 1 (DIFF V1), 2, 4 (Motif-2-12.7B); a kv head per noise head or shared.
                      Shape{AttentionKind::diff_grouped, 2, 1, 4, 2, 32, 2}, Shape{AttentionKind::diff_grouped, 1, 65, 8, 2, 64, 4},
                      Shape{AttentionKind::diff_grouped, 2, 127, 4, 1, 32, 2}, Shape{AttentionKind::diff_grouped, 1, 63, 2, 2, 128, 1},
                      Shape{AttentionKind::diff_grouped, 1, 1000, 4, 1, 32, 4}, Shape{AttentionKind::diff_grouped, 4, 80, 6, 1, 16, 3},
                      Shape{AttentionKind::diff_grouped, 16, 64, 4, 2, 16, 2}, Shape{AttentionKind::diff_grouped, 1, 70, 4, 2, 24, 2}),
    [](const ::testing::TestParamInfo<Shape>& info) {
      const Shape& s = info.param;
      return std::string(attention_kind_name(s.kind)) + "_B" + std::to_string(s.B) + "_T" + std::to_string(s.T) +
             "_H" + std::to_string(s.H) + "_Hkv" + std::to_string(s.Hkv) + "_d" + std::to_string(s.d) +
             (s.r == 1 && s.kind != AttentionKind::diff_grouped ? "" : "_r" + std::to_string(s.r));
    });

// The scratch memory is reused across calls of different sizes; a large call followed by a small
// one (and the reverse) must give the same results as fresh calls.
TEST(FusedAttentionScratch, ReuseAcrossShapesGivesSameResults) {
  const AttentionDims big{AttentionKind::diff, 2, 200, 2, 1, 64}, small{AttentionKind::diff, 1, 70, 1, 1, 32};
  auto run = [](const AttentionDims& dims) {
    const AttentionCase c = AttentionCase::random(dims, 5);
    std::vector<float> out(c.rows() * dims.out_width()), lse(attention_lse_floats(dims));
    std::vector<float> maps_out(attention_maps_out_floats(dims));
    backends::cpu::kernels().attention_forward(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(), {lse.data(), maps_out.data()});
    std::vector<float> dq(c.q.size()), dk(c.k.size()), dv(c.v.size()), dl(1);
    backends::cpu::kernels().attention_backward(dims, c.q.data(), c.k.data(), c.v.data(), c.lambda_ptr(), out.data(),
                       {lse.data(), maps_out.data()}, c.dout.data(), dq.data(), dk.data(), dv.data(), dl.data());
    out.insert(out.end(), dq.begin(), dq.end());
    out.insert(out.end(), dk.begin(), dk.end());
    out.insert(out.end(), dv.begin(), dv.end());
    out.push_back(dl[0]);
    return out;
  };
  const auto small_first = run(small), big_first = run(big);
  EXPECT_EQ(run(small), small_first);
  EXPECT_EQ(run(big), big_first);
}

}  // namespace
}  // namespace difftx::kernels
