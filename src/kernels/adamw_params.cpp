// AdamW's hyperparameter check (ops.h), compiled once: adamw.cpp's update is per CPU level.
#include <cmath>

#include "core/error.h"
#include "kernels/ops.h"

namespace difftx::kernels {

void check_adamw_params(const AdamWParams& hp) {
  DIFFTX_CHECK(hp.step >= 1, "adamw_update: step must be >= 1 (1-based), got ", hp.step);
  DIFFTX_CHECK(hp.beta1 >= 0 && hp.beta1 < 1 && hp.beta2 >= 0 && hp.beta2 < 1,
               "adamw_update: betas must lie in [0, 1) as floats, got beta1=", hp.beta1, " beta2=", hp.beta2);
  const auto usable = [](float x) { return std::isfinite(x) && x >= 0; };
  DIFFTX_CHECK(usable(hp.lr) && usable(hp.eps) && usable(hp.weight_decay),
               "adamw_update: lr, eps and weight_decay must be finite and not negative, got lr=", hp.lr,
               " eps=", hp.eps, " weight_decay=", hp.weight_decay);
}

}  // namespace difftx::kernels
