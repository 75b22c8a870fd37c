#include "data/token_table.h"

namespace difftx::data {

void TokenTable::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
  mask_ = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.rank < 0) continue;
    uint64_t i = hash(arena_.data() + s.offset, s.length) & mask_;
    while (slots_[i].rank >= 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

bool TokenTable::insert(std::string_view bytes, int32_t rank) {
  if (bytes.empty() || rank < 0 || has_rank(rank) || find(bytes) >= 0) return false;
  if ((size_ + 1) * 2 > slots_.size()) grow();  // load factor at most 1/2
  const uint64_t h = hash(bytes.data(), bytes.size());
  uint64_t i = h & mask_;
  while (slots_[i].rank >= 0) i = (i + 1) & mask_;
  const auto offset = static_cast<uint32_t>(arena_.size());
  const auto length = static_cast<uint32_t>(bytes.size());
  arena_.append(bytes);
  slots_[i] = Slot{static_cast<uint32_t>(h >> 32), rank, offset, length};
  if (static_cast<size_t>(rank) >= by_rank_.size()) by_rank_.resize(rank + 1, {0, 0});
  by_rank_[rank] = {offset, length};
  if (length == 1) byte_rank_[static_cast<unsigned char>(bytes[0])] = rank;
  ++size_;
  return true;
}

}  // namespace difftx::data
