// Random inputs for one attention shape, shared by the attention tests.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/rng.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/flash.h"
#include "reference/attention_reference.h"
#include "support/testing.h"

namespace difftx::testing {

struct AttentionCase {
  kernels::AttentionDims dims;
  std::vector<float> q, k, v, lambda, dout;

  int64_t rows() const { return dims.B * dims.T; }
  // lambda: unused for baseline, a scalar in [0.2, 0.8] for diff and diff_grouped, logits in [-2, 2] for diff2.
  // Queries are scaled by `sharpness` so that softmax maps are far from uniform.
  static AttentionCase random(const kernels::AttentionDims& dims, uint64_t seed, double sharpness = 3.0) {
    Rng rng(seed);
    AttentionCase c{dims, {}, {}, {}, {}, {}};
    const int64_t N = dims.B * dims.T;
    c.q = random_vector(N * dims.q_width(), rng, -sharpness, sharpness);
    c.k = random_vector(N * dims.k_width(), rng);
    c.v = random_vector(N * dims.v_width(), rng);
    c.dout = random_vector(N * dims.out_width(), rng);
    const kernels::LambdaSource source = dims.variant().lambda_source();
    if (source == kernels::LambdaSource::layer_scalar) c.lambda = random_vector(1, rng, 0.2, 0.8);
    if (source == kernels::LambdaSource::token_logits)
      c.lambda = random_vector(attention_lambda_floats(dims), rng, -2, 2);
    return c;
  }
  const float* lambda_ptr() const { return lambda.empty() ? nullptr : lambda.data(); }
};

inline std::string describe(const kernels::AttentionDims& a) {
  return std::string(kernels::attention_kind_name(a.kind)) + " B=" + std::to_string(a.B) + " T=" + std::to_string(a.T) +
         " H=" + std::to_string(a.H) + " Hkv=" + std::to_string(a.Hkv) + " d=" + std::to_string(a.d) +
         (a.r == 1 ? "" : " r=" + std::to_string(a.r));
}

// Every element of got within atol + rtol |want| of want; the failure names `what`, the first
// mismatch and the largest difference.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol,
                         const std::string& what) {
  std::string mismatch;
  EXPECT_TRUE(all_close(got, want, atol, rtol, &mismatch))
      << what << ": " << mismatch << " (max abs diff " << max_abs_diff(got, want) << ")";
}

// The fused kernel's paths to test at dims: the scalar one, and the CPU level's vector one where
// it takes these dims.
inline std::vector<kernels::flash::Path> flash_paths(const kernels::AttentionDims& dims) {
  std::vector<kernels::flash::Path> paths = {kernels::flash::Path::scalar};
  if (backends::cpu::kernels().flash_default_path(dims) == kernels::flash::Path::simd)
    paths.push_back(kernels::flash::Path::simd);
  return paths;
}

}  // namespace difftx::testing
