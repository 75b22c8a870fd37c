// The growth of an open-addressing hash table with linear probing over a power-of-two number of
// slots (pair_merges.h, token_table.h).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace difftx::data {

// Doubles `slots` (1024 at first), sets `mask` to the new size - 1 and puts each occupied slot
// back at the first free one from hash(slot) & mask.
template <typename Slot, typename Occupied, typename Hash>
void grow_table(std::vector<Slot>& slots, uint64_t& mask, Occupied occupied, Hash hash) {
  std::vector<Slot> old = std::move(slots);
  slots.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
  mask = slots.size() - 1;
  for (const Slot& s : old) {
    if (!occupied(s)) continue;
    uint64_t i = hash(s) & mask;
    while (occupied(slots[i])) i = (i + 1) & mask;
    slots[i] = s;
  }
}

}  // namespace difftx::data
