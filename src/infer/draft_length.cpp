#include "infer/draft_length.h"

namespace difftx::infer {

int64_t DraftLength::window(int64_t max) const {
  const double alpha = acceptance();
  // Tokens a step over its time rise with k and then fall (the tokens grow ever slower, the
  // time linearly): the first k whose rate falls ends the search.
  double tokens = 1, taken_all = 1, best_rate = 0;
  int64_t best = 1;
  for (int64_t k = 1; k <= max; ++k) {
    taken_all *= alpha;
    tokens += taken_all;
    const double rate = tokens / (1 + kCost * static_cast<double>(k));
    if (rate <= best_rate) break;
    best_rate = rate;
    best = k;
  }
  return best;
}

void DraftLength::observe(int64_t taken, bool missed) {
  taken_ = kDecay * taken_ + static_cast<double>(taken);
  missed_ = kDecay * missed_ + (missed ? 1.0 : 0.0);
}

}  // namespace difftx::infer
