#include "data/token_table.h"

#include "data/open_table.h"

namespace difftx::data {

void TokenTable::grow() {
  grow_table(slots_, mask_, [](const Slot& s) { return s.rank >= 0; },
             [&](const Slot& s) { return hash(arena_.data() + s.offset, s.length); });
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
