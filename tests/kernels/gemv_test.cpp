// The decode GEMV against its double reference twin on awkward shapes (widths that are not a
// multiple of the 16-float vector or of the four-row step), overwrite and accumulate modes.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "kernels/gemv.h"
#include "support/testing.h"

namespace difftx {
namespace {

TEST(Gemv, MatchesReferenceOnAwkwardShapes) {
  Rng rng(5);
  for (int64_t out : {1, 3, 4, 7, 64, 1001})
    for (int64_t in : {1, 15, 16, 17, 256, 777})
      for (bool accumulate : {false, true}) {
        const auto W = testing::random_vector(out * in, rng), x = testing::random_vector(in, rng);
        auto got = testing::random_vector(out, rng);
        auto want = got;
        gemv(W.data(), x.data(), got.data(), out, in, accumulate);
        gemv_reference(W.data(), x.data(), want.data(), out, in, accumulate);
        // float32 sums of `in` products of values in [-1, 1]
        EXPECT_LT(testing::max_abs_diff(got, want), 2e-7 * static_cast<double>(in) + 1e-6)
            << "out=" << out << " in=" << in << " accumulate=" << accumulate;
      }
}

TEST(Gemv, RejectsNegativeSizes) { EXPECT_THROW(gemv(nullptr, nullptr, nullptr, -1, 4), Error); }

}  // namespace
}  // namespace difftx
