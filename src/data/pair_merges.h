// The merge list of a Hugging Face BPE model (tokenizer.json "merges"): which two adjacent
// tokens may merge, with what priority (the merge's index in the list, lower first), into
// which token. Unlike tiktoken's rule (bpe.h), two parts merge only when their pair is listed,
// not whenever their concatenation is a token. An open-addressing table keyed by the id pair.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace difftx::data {

// One possible merge: its priority (kNoMerge when the pair does not merge) and the token it
// makes.
struct MergeStep {
  int32_t rank;
  int32_t id;
};
inline constexpr int32_t kNoMerge = INT32_MAX;

class PairMerges {
 public:
  // Adds or replaces (a later entry of the same pair wins, as in Hugging Face tokenizers).
  void set(int32_t left, int32_t right, int32_t rank, int32_t id);

  MergeStep find(int32_t left, int32_t right) const {
    if (slots_.empty()) return {kNoMerge, -1};
    const uint64_t key = pack(left, right);
    for (uint64_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.step.id < 0) return {kNoMerge, -1};
      if (s.key == key) return s.step;
    }
  }

  size_t size() const { return size_; }

  // Every merge, in priority order: (left, right, result).
  struct Entry {
    int32_t left, right, id;
  };
  std::vector<Entry> in_rank_order() const;

 private:
  struct Slot {
    uint64_t key = 0;
    MergeStep step{kNoMerge, -1};  // id -1: empty
  };
  static uint64_t pack(int32_t l, int32_t r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  }
  static uint64_t mix(uint64_t k) {
    k ^= k >> 31;
    k *= 0x9E3779B97F4A7C15ull;
    return k ^ (k >> 29);
  }
  void grow();

  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace difftx::data
