#include "data/pair_merges.h"

#include <algorithm>

#include "data/open_table.h"

namespace difftx::data {

void PairMerges::grow() {
  grow_table(slots_, mask_, [](const Slot& s) { return s.step.id >= 0; }, [](const Slot& s) { return mix(s.key); });
}

void PairMerges::set(int32_t left, int32_t right, int32_t rank, int32_t id) {
  if ((size_ + 1) * 2 > slots_.size()) grow();  // load factor at most 1/2
  const uint64_t key = pack(left, right);
  uint64_t i = mix(key) & mask_;
  while (slots_[i].step.id >= 0 && slots_[i].key != key) i = (i + 1) & mask_;
  if (slots_[i].step.id < 0) ++size_;
  slots_[i] = Slot{key, MergeStep{rank, id}};
}

std::vector<PairMerges::Entry> PairMerges::in_rank_order() const {
  std::vector<std::pair<int32_t, Entry>> ranked;
  ranked.reserve(size_);
  for (const Slot& s : slots_)
    if (s.step.id >= 0)
      ranked.push_back({s.step.rank, Entry{static_cast<int32_t>(s.key >> 32),
                                           static_cast<int32_t>(s.key & 0xFFFFFFFFu), s.step.id}});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Entry> out;
  out.reserve(ranked.size());
  for (const auto& r : ranked) out.push_back(r.second);
  return out;
}

}  // namespace difftx::data
