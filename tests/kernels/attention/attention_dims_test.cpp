// AttentionDims widths per variant (docs/SPEC.md §2) and the errors bad dims and arguments produce.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "kernels/attention/attention.h"
#include "reference/attention_reference.h"

namespace difftx::kernels {
namespace {

// Runs fn, expecting a difftx::Error whose message contains every one of `parts`.
void expect_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected difftx::Error mentioning '" << parts[0] << "'";
  } catch (const Error& e) {
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(AttentionDims, WidthsFollowSpecPerVariant) {
  const AttentionDims base{AttentionKind::baseline, 2, 10, 8, 2, 64};
  EXPECT_EQ(base.q_width(), 8 * 64);
  EXPECT_EQ(base.k_width(), 2 * 64);
  EXPECT_EQ(base.v_width(), 2 * 64);
  EXPECT_EQ(base.out_width(), 8 * 64);
  EXPECT_EQ(attention_lse_floats(base), 2 * 8 * 10);
  EXPECT_EQ(attention_maps_out_floats(base), 0);
  const AttentionDims diff{AttentionKind::diff, 2, 10, 4, 2, 64};  // parameter-matched to `base`
  EXPECT_EQ(diff.q_width(), 2 * 4 * 64);
  EXPECT_EQ(diff.k_width(), 2 * 2 * 64);
  EXPECT_EQ(diff.v_width(), 2 * 2 * 64);
  EXPECT_EQ(diff.out_width(), 4 * 2 * 64);
  EXPECT_EQ(attention_lse_floats(diff), 2 * 8 * 10);
  EXPECT_EQ(attention_maps_out_floats(diff), 2 * 10 * 8 * 128);
  const AttentionDims diff2{AttentionKind::diff2, 2, 10, 4, 2, 64};
  EXPECT_EQ(diff2.q_width(), 2 * 4 * 64);
  EXPECT_EQ(diff2.k_width(), 2 * 64);
  EXPECT_EQ(diff2.v_width(), 2 * 64);
  EXPECT_EQ(diff2.out_width(), 4 * 64);
  EXPECT_EQ(attention_maps_out_floats(diff2), 2 * 10 * 8 * 64);
}

TEST(AttentionDims, KindNamesRoundTripAndUnknownNamesAreRejected) {
  for (AttentionKind k : {AttentionKind::baseline, AttentionKind::diff, AttentionKind::diff2})
    EXPECT_EQ(attention_kind_from_name(attention_kind_name(k)), k);
  expect_error([] { attention_kind_from_name("diff3"); }, {"'diff3'", "baseline"});
}

TEST(AttentionDims, ValidateNamesTheBadField) {
  const AttentionDims good{AttentionKind::diff, 1, 4, 4, 2, 8};
  EXPECT_NO_THROW(good.validate());
  auto with = [&](auto edit) {
    AttentionDims d = good;
    edit(d);
    return [d] { d.validate(); };
  };
  expect_error(with([](AttentionDims& d) { d.B = 0; }), {"'B'", "got 0"});
  expect_error(with([](AttentionDims& d) { d.T = -3; }), {"'T'", "got -3"});
  expect_error(with([](AttentionDims& d) { d.H = 0; }), {"'H'"});
  expect_error(with([](AttentionDims& d) { d.Hkv = 0; }), {"'Hkv'"});
  expect_error(with([](AttentionDims& d) { d.Hkv = 3; }), {"'Hkv'", "H=4 Hkv=3"});
  expect_error(with([](AttentionDims& d) { d.d = 0; }), {"'d'"});
  expect_error(with([](AttentionDims& d) { d.kind = static_cast<AttentionKind>(7); }), {"'kind'"});
  expect_error(with([](AttentionDims& d) { d.T = int64_t{1} << 40; }), {"too large"});
}

TEST(AttentionDims, KernelsRejectMissingTensorsNamingThem) {
  const AttentionDims dims{AttentionKind::diff, 1, 4, 1, 1, 16};
  std::vector<float> q(4 * 32), k(4 * 32), v(4 * 32), out(4 * 32), lse(8), maps(4 * 2 * 32), lambda(1, 0.5f);
  expect_error([&] { backends::cpu::kernels().attention_forward(dims, q.data(), k.data(), v.data(), lambda.data(), out.data(), {nullptr, maps.data()}); },
               {"saved.lse", "8 floats"});
  expect_error([&] { backends::cpu::kernels().attention_forward(dims, q.data(), k.data(), v.data(), lambda.data(), out.data(), {lse.data(), nullptr}); },
               {"saved.maps_out"});
  expect_error([&] { backends::cpu::kernels().attention_forward(dims, q.data(), k.data(), v.data(), nullptr, out.data(), {lse.data(), maps.data()}); },
               {"lambda", "diff"});
  expect_error([&] {
    backends::cpu::kernels().attention_backward(dims, q.data(), k.data(), v.data(), lambda.data(), out.data(), {lse.data(), maps.data()},
                       out.data(), q.data(), k.data(), v.data(), nullptr);
  }, {"dlambda"});
  AttentionDims bad = dims;
  bad.Hkv = 2;
  expect_error([&] { backends::cpu::kernels().attention_forward(bad, q.data(), k.data(), v.data(), lambda.data(), out.data(), {lse.data(), maps.data()}); },
               {"'Hkv'"});
  expect_error([&] { attention_forward_reference(bad, q.data(), k.data(), v.data(), lambda.data(), out.data()); },
               {"'Hkv'"});
}

}  // namespace
}  // namespace difftx::kernels
