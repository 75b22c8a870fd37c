#include "support/testing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "core/error.h"

namespace difftx::testing {

std::vector<float> random_vector(int64_t n, Rng& rng, double lo, double hi) {
  std::vector<float> out(n);
  for (auto& x : out) x = static_cast<float>(rng.uniform(lo, hi));
  return out;
}

std::vector<double> to_double(const std::vector<float>& x) { return {x.begin(), x.end()}; }

double max_abs_diff(const float* a, const float* b, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= worst)) worst = d;  // NaN propagates as worst
  }
  return worst;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  DIFFTX_CHECK(a.size() == b.size(), "max_abs_diff: sizes ", a.size(), " and ", b.size());
  return max_abs_diff(a.data(), b.data(), static_cast<int64_t>(a.size()));
}

bool all_close(const std::vector<float>& a, const std::vector<float>& b, double atol, double rtol,
               std::string* first_mismatch) {
  DIFFTX_CHECK(a.size() == b.size(), "all_close: sizes ", a.size(), " and ", b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= atol + rtol * std::fabs(static_cast<double>(b[i])))) {
      if (first_mismatch) {
        std::ostringstream s;
        s << "index " << i << ": " << a[i] << " vs " << b[i];
        *first_mismatch = s.str();
      }
      return false;
    }
  }
  return true;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_error(const std::function<void()>& fn, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "expected an error mentioning '" << part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

std::vector<double> finite_difference(std::vector<double>& x, const std::function<double()>& f,
                                      double h) {
  std::vector<double> grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = f();
    x[i] = saved - h;
    const double down = f();
    x[i] = saved;
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

}  // namespace difftx::testing
