#include "support/backend_case.h"

#include <cctype>

#include "backends/cpu/cpu_backend.h"
#include "support/testing.h"

namespace difftx::testing {

const std::vector<std::string>& devices_here() {
  static const std::vector<std::string> names = backends::device_names();
  return names;
}

std::vector<BackendUnderTest> backends_under_test() {
  std::vector<BackendUnderTest> all;
  for (CpuLevel level : cpu_levels_runnable())
    all.push_back({std::string("cpu_") + cpu_level_name(level), &backends::cpu::level_backend(level), ""});
  for (const std::string& device : devices_here()) {
    if (device == "cpu") continue;
    std::string name;
    for (char c : device)
      if (std::isalnum(static_cast<unsigned char>(c))) name += c;
    all.push_back({name, nullptr, device});
  }
  return all;
}

std::string backend_test_name(const ::testing::TestParamInfo<BackendUnderTest>& info) { return info.param.name; }

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol,
                 const std::string& what) {
  std::string mismatch;
  EXPECT_TRUE(all_close(got, std::vector<float>(want.begin(), want.end()), atol, rtol, &mismatch))
      << what << ": " << mismatch;
}

std::vector<float> random_lambda(const kernels::AttentionVariant& v, int64_t rows, Rng& rng) {
  if (v.lambda_source() == kernels::LambdaSource::layer_scalar) return random_vector(1, rng, 0.2, 0.8);
  if (v.lambda_source() == kernels::LambdaSource::token_logits) return random_vector(rows * v.H, rng, -2, 2);
  return {};
}

}  // namespace difftx::testing
