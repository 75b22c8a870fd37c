// Exact order statistics of |x| over a stream of floats too large to keep (activation
// outliers, paper §3.7 Table 5: hundreds of millions of attention logits): the count, the three
// largest values and the median, all exact.
//
// The median takes two passes over the same values (histogram refinement). For x >= 0 the
// float bit patterns are ordered like the values, so pass 1 counts the top 15 bits of |x|'s
// pattern (sign cleared: 32768 coarse bins, exponent + 7 mantissa bits) and finds the bins that
// hold the middle ranks; pass 2 counts the low 16 bits inside those bins only (at most two),
// which pins down the exact values. Median of an even count: the mean of the two middle values
// (numpy's definition). Top-k counts repeated values separately (the k largest entries).
//
// Use: one accumulator per thread for each pass, merged; between the passes, call
// start_refinement() on the merged one and give each thread worker() copies of it.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace difftx::eval {

struct AbsSummary {
  int64_t count = 0;
  double top1 = 0, top2 = 0, top3 = 0;  // NaN when fewer values were seen
  double median = 0;                     // NaN when no values were seen
};

class AbsValueStats {
 public:
  // `what` names the values in errors ("attention logits").
  explicit AbsValueStats(std::string what = "values");

  void add(const float* x, int64_t n);
  void merge(const AbsValueStats& other);  // an accumulator of the same pass
  // After pass 1 (all values added and merged): checks that every value was finite and picks
  // the coarse bins of the middle ranks. Then run pass 2 over exactly the same values.
  void start_refinement();
  // An empty accumulator of the current pass (same bins), for another thread.
  AbsValueStats worker() const;
  // After pass 2: the exact statistics. Throws if pass 2 did not see the same values.
  AbsSummary summary() const;

  int64_t count() const { return count_; }

 private:
  static constexpr int kCoarseBins = 1 << 15, kFineBins = 1 << 16;
  std::string what_;
  bool refining_ = false;
  int64_t count_ = 0;                    // values added in this pass
  std::array<uint32_t, 3> top_{};        // bit patterns of the three largest |x|, descending (pass 1)
  int64_t top_seen_ = 0;                 // how many of top_ are filled
  std::vector<int64_t> coarse_;          // pass 1
  int64_t pass1_count_ = 0;              // pass 2: the count pass 1 saw
  std::array<uint32_t, 2> bins_{};       // pass 2: coarse bins of the lower and upper middle ranks
  std::array<int64_t, 2> rank_in_bin_{}; // their ranks inside those bins
  std::vector<int64_t> fine_[2];         // pass 2: low 16 bits inside bins_[0], bins_[1]
};

}  // namespace difftx::eval
