// The mergeable tokens of a byte-level BPE vocabulary: byte string <-> rank, both ways.
// Lookups by bytes go through an open-addressing hash table over one byte arena, because BPE
// encoding spends most of its time asking "is this byte string a token, and of what rank?".
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace difftx::data {

class TokenTable {
 public:
  // Adds a token; false (and no change) if these bytes or this rank are already present.
  bool insert(std::string_view bytes, int32_t rank);

  // The rank of these bytes, or -1 when they are not a token.
  int32_t find(const char* bytes, size_t length) const {
    if (slots_.empty()) return -1;
    const uint64_t h = hash(bytes, length);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.rank < 0) return -1;
      if (s.tag == tag && s.length == length &&
          std::memcmp(arena_.data() + s.offset, bytes, length) == 0)
        return s.rank;
    }
  }
  int32_t find(std::string_view bytes) const { return find(bytes.data(), bytes.size()); }

  // The bytes of a rank; empty when no token has this rank.
  std::string_view bytes_of(int32_t rank) const {
    if (rank < 0 || static_cast<size_t>(rank) >= by_rank_.size()) return {};
    const auto& [offset, length] = by_rank_[rank];
    return std::string_view(arena_.data() + offset, length);
  }
  // The rank of the single byte b, or -1 when it is not a token (a table lookup, no hashing).
  int32_t byte_rank(unsigned char b) const { return byte_rank_[b]; }
  bool has_rank(int32_t rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < by_rank_.size() && by_rank_[rank].second > 0;
  }

  size_t size() const { return size_; }
  // One past the largest rank (0 when empty).
  int32_t rank_end() const { return static_cast<int32_t>(by_rank_.size()); }

  static uint64_t hash(const char* p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xFF51AFD7ED558CCDull);
    for (; n >= 8; p += 8, n -= 8) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      h = (h ^ v) * 0xBF58476D1CE4E5B9ull;
      h ^= h >> 29;
    }
    if (n > 0) {
      uint64_t v = 0;
      std::memcpy(&v, p, n);
      h = (h ^ v) * 0x94D049BB133111EBull;
    }
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    return h ^ (h >> 32);
  }

 private:
  struct Slot {
    uint32_t tag = 0;
    int32_t rank = -1;  // -1: empty
    uint32_t offset = 0;
    uint32_t length = 0;
  };
  void grow();

  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  size_t size_ = 0;
  std::string arena_;
  std::vector<std::pair<uint32_t, uint32_t>> by_rank_;  // (offset, length); length 0: no token
  std::array<int32_t, 256> byte_rank_ = filled_minus_one();
  static std::array<int32_t, 256> filled_minus_one() {
    std::array<int32_t, 256> a;
    a.fill(-1);
    return a;
  }
};

}  // namespace difftx::data
