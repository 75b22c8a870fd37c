// Power-law fits of the scaling sweep (paper Figure 3): validation loss L against a size x
// (non-embedding parameters, or training tokens) as L = a x^b, a straight line in log-log space
// fitted by least squares on the logs, and how much x a variant needs to reach the loss the
// baseline's fit gives at x0 (the paper: DIFF matches the baseline with about 62-65% of its
// parameters or tokens).
#pragma once
#include <vector>

namespace difftx::results {

struct PowerLaw {
  double a = 0, b = 0;  // L = a x^b (b < 0 when loss falls with x)
  double at(double x) const;
  double x_for(double loss) const;  // the x at which the fit reaches `loss`
};

// Needs at least two distinct positive x and positive losses, all finite; errors name what is wrong.
PowerLaw fit_power_law(const std::vector<double>& x, const std::vector<double>& loss);

// variant.x_for(baseline.at(x0)) / x0: below 1 when the variant needs less x for the same loss.
double matching_ratio(const PowerLaw& variant, const PowerLaw& baseline, double x0);

}  // namespace difftx::results
