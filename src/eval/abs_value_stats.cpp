#include "eval/abs_value_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include "core/error.h"

namespace difftx::eval {
namespace {

constexpr uint32_t kFirstNonFiniteBin = 0x7f800000u >> 16;  // +inf and NaN patterns start here

uint32_t abs_bits(float x) { return std::bit_cast<uint32_t>(x) & 0x7fffffffu; }
double value_of(uint32_t bits) { return std::bit_cast<float>(bits); }

// The bin holding rank r (0-based, ascending) of a histogram, and r's rank inside it.
std::pair<uint32_t, int64_t> locate(const std::vector<int64_t>& histogram, int64_t r) {
  int64_t below = 0;
  for (size_t bin = 0; bin < histogram.size(); ++bin) {
    if (below + histogram[bin] > r) return {static_cast<uint32_t>(bin), r - below};
    below += histogram[bin];
  }
  fail("abs value stats: rank ", r, " beyond the ", below, " values counted");
}

}  // namespace

AbsValueStats::AbsValueStats(std::string what) : what_(std::move(what)), coarse_(kCoarseBins, 0) {}

void AbsValueStats::add(const float* x, int64_t n) {
  count_ += n;
  if (refining_) {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t u = abs_bits(x[i]), bin = u >> 16;
      if (bin == bins_[0]) ++fine_[0][u & 0xffffu];
      else if (bin == bins_[1]) ++fine_[1][u & 0xffffu];
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = abs_bits(x[i]);
    ++coarse_[u >> 16];
    if (top_seen_ < 3 || u > top_[2]) {  // rare after the first few values: keep the three largest
      int64_t at = std::min<int64_t>(top_seen_, 2);
      while (at > 0 && top_[at - 1] < u) {
        top_[at] = top_[at - 1];
        --at;
      }
      top_[at] = u;
      top_seen_ = std::min<int64_t>(top_seen_ + 1, 3);
    }
  }
}

void AbsValueStats::merge(const AbsValueStats& o) {
  DIFFTX_CHECK(o.refining_ == refining_, "abs value stats (", what_, "): merging accumulators of different passes");
  count_ += o.count_;
  if (refining_) {
    DIFFTX_CHECK(o.bins_ == bins_, "abs value stats (", what_, "): merging pass-2 accumulators of different bins");
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < kFineBins; ++j) fine_[i][j] += o.fine_[i][j];
    return;
  }
  for (int j = 0; j < kCoarseBins; ++j) coarse_[j] += o.coarse_[j];
  std::vector<uint32_t> all(top_.begin(), top_.begin() + top_seen_);
  all.insert(all.end(), o.top_.begin(), o.top_.begin() + o.top_seen_);
  std::sort(all.begin(), all.end(), std::greater<>());
  top_seen_ = std::min<int64_t>(static_cast<int64_t>(all.size()), 3);
  std::copy(all.begin(), all.begin() + top_seen_, top_.begin());
}

void AbsValueStats::start_refinement() {
  DIFFTX_CHECK(!refining_, "abs value stats (", what_, "): start_refinement called twice");
  int64_t non_finite = 0;
  for (uint32_t bin = kFirstNonFiniteBin; bin < kCoarseBins; ++bin) non_finite += coarse_[bin];
  DIFFTX_CHECK(non_finite == 0, what_, ": ", non_finite, " of ", count_, " values are infinite or NaN");
  refining_ = true;
  pass1_count_ = count_;
  count_ = 0;
  bins_ = {kCoarseBins, kCoarseBins};  // no bin: nothing to refine when there are no values
  if (pass1_count_ > 0) {
    const int64_t ranks[2] = {(pass1_count_ - 1) / 2, pass1_count_ / 2};
    for (int i = 0; i < 2; ++i) std::tie(bins_[i], rank_in_bin_[i]) = locate(coarse_, ranks[i]);
  }
  for (auto& f : fine_) f.assign(kFineBins, 0);
}

AbsValueStats AbsValueStats::worker() const {
  AbsValueStats w(what_);
  w.refining_ = refining_;
  w.bins_ = bins_;
  w.rank_in_bin_ = rank_in_bin_;
  w.pass1_count_ = pass1_count_;
  if (refining_)
    for (auto& f : w.fine_) f.assign(kFineBins, 0);
  return w;
}

AbsSummary AbsValueStats::summary() const {
  DIFFTX_CHECK(refining_, "abs value stats (", what_, "): summary() needs both passes (call start_refinement)");
  DIFFTX_CHECK(count_ == pass1_count_, what_, ": the second pass saw ", count_, " values, the first ", pass1_count_,
               " (both passes must see the same values)");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  AbsSummary s;
  s.count = pass1_count_;
  double* tops[3] = {&s.top1, &s.top2, &s.top3};
  for (int i = 0; i < 3; ++i) *tops[i] = i < top_seen_ ? value_of(top_[i]) : nan;
  if (s.count == 0) {
    s.median = nan;
    return s;
  }
  double middle[2];
  for (int i = 0; i < 2; ++i) {
    const std::vector<int64_t>& fine = fine_[i == 1 && bins_[1] == bins_[0] ? 0 : i];
    int64_t in_bin = 0;
    for (int64_t c : fine) in_bin += c;
    DIFFTX_CHECK(in_bin == coarse_[bins_[i]], what_, ": the second pass saw other values than the first",
                 " (both passes must see the same values)");
    const uint32_t low = locate(fine, rank_in_bin_[i]).first;
    middle[i] = value_of(bins_[i] << 16 | low);
  }
  s.median = (middle[0] + middle[1]) / 2;
  return s;
}

}  // namespace difftx::eval
