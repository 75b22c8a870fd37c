// Shared helpers for tests: random tensors, comparisons, finite differences.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.h"

namespace difftx::testing {

std::vector<float> random_vector(int64_t n, Rng& rng, double lo = -1.0, double hi = 1.0);
std::vector<double> to_double(const std::vector<float>& x);

// max |a - b| over all elements (sizes must match).
double max_abs_diff(const float* a, const float* b, int64_t n);
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b);
// max |a - b| / (atol + |b|) style check: true when every |a-b| <= atol + rtol*|b|.
bool all_close(const std::vector<float>& a, const std::vector<float>& b, double atol, double rtol,
               std::string* first_mismatch = nullptr);

// The message of the difftx::Error that fn throws, or "(no error)" when it throws none.
std::string error_of(const std::function<void()>& fn);
// Fails the test unless fn throws a difftx::Error whose message contains `part`.
void expect_error(const std::function<void()>& fn, const std::string& part);

// Central finite difference of a scalar function f(x) in double, for each element of x:
//   (f(x + h e_i) - f(x - h e_i)) / 2h. x is restored afterwards.
std::vector<double> finite_difference(std::vector<double>& x,
                                      const std::function<double()>& f, double h = 1e-6);

}  // namespace difftx::testing
