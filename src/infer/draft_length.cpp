#include "infer/draft_length.h"

#include <algorithm>
#include <cmath>

namespace difftx::infer {

int64_t DraftLength::window(int64_t max) const {
  const double alpha = acceptance();
  // The largest k with alpha^k >= kCost.
  const double k = alpha >= 1 ? static_cast<double>(max) : std::floor(std::log(kCost) / std::log(alpha));
  return std::clamp<int64_t>(static_cast<int64_t>(std::min(k, static_cast<double>(max))), 1, max);
}

void DraftLength::observe(int64_t taken, bool missed) {
  taken_ = kDecay * taken_ + static_cast<double>(taken);
  missed_ = kDecay * missed_ + (missed ? 1.0 : 0.0);
}

}  // namespace difftx::infer
