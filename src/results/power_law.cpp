#include "results/power_law.h"

#include <cmath>

#include "core/error.h"

namespace difftx::results {

double PowerLaw::at(double x) const { return a * std::pow(x, b); }

double PowerLaw::x_for(double loss) const {
  DIFFTX_CHECK(b != 0 && a > 0 && loss > 0, "power law: no size reaches loss ", loss, " on L = ", a, " x^", b);
  return std::pow(loss / a, 1 / b);
}

PowerLaw fit_power_law(const std::vector<double>& x, const std::vector<double>& loss) {
  DIFFTX_CHECK(x.size() == loss.size(), "power law fit: ", x.size(), " sizes for ", loss.size(), " losses");
  DIFFTX_CHECK(x.size() >= 2, "power law fit: needs at least two points, got ", x.size());
  double mx = 0, my = 0;
  const double n = static_cast<double>(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    DIFFTX_CHECK(std::isfinite(x[i]) && x[i] > 0 && std::isfinite(loss[i]) && loss[i] > 0,
                 "power law fit: point ", i, " (", x[i], ", ", loss[i], ") needs a positive finite size and loss");
    mx += std::log(x[i]) / n, my += std::log(loss[i]) / n;
  }
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double dx = std::log(x[i]) - mx;
    sxx += dx * dx, sxy += dx * (std::log(loss[i]) - my);
  }
  DIFFTX_CHECK(sxx > 0, "power law fit: every point has the same size ", x.front());
  const double b = sxy / sxx;
  return {std::exp(my - b * mx), b};
}

double matching_ratio(const PowerLaw& variant, const PowerLaw& baseline, double x0) {
  DIFFTX_CHECK(x0 > 0, "matching ratio: size ", x0, " must be positive");
  return variant.x_for(baseline.at(x0)) / x0;
}

}  // namespace difftx::results
