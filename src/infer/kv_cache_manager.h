// The KV-cache manager: what each sequence holds of the cache, between the scheduler and the
// block pools. The scheduler asks it for slots (allocate_slots), tells it what a step computed
// (commit) and gives a sequence's slots back (free: finished, cancelled or preempted); the
// forward reads each sequence's tables. Its answers are plain values.
//
// A model's layers fall into groups by what they keep per sequence (CacheKind): full attention
// (a block per block_tokens positions), a sliding window (the same, with blocks that fell out of
// the window given back), recurrent state (a fixed-size slot per sequence, e.g. Mamba's conv
// window and SSM state) and shared (layers that read another group's pages and hold none, as
// YOCO's cross-decoder). Every page group's block table has the same length (block i: positions
// [i * block_tokens, (i + 1) * block_tokens)), and all of them draw from one BlockPool (a block id
// is one group's at a time); recurrent groups draw their slots from a second pool, owned here.
//
// Lookahead: allocate_slots can add slots for draft tokens beyond the new ones (speculative
// decoding verifies them as extra rows of one step); commit keeps those accepted and rolls the
// rest back: blocks past the kept positions are given back and each recurrent group's state is
// taken from the slot that holds it after the last kept position.
//
// The prefix cache (block_pool.h) reuses full prompt blocks of every page group, looked up in
// step (block i is a hit only where every page group holds it). Recurrent state is not
// snapshotted at block boundaries, so a model with a recurrent group has the prefix cache off
// (prefix_cache() says why).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "infer/block_pool.h"
#include "model/config.h"

namespace difftx::infer {

enum class CacheKind {
  full,            // keys and values of every position
  sliding_window,  // keys and values of the last `window` positions a row reads
  recurrent,       // one fixed-size state per sequence
  shared,          // reads the pages of group `source`, holds none
};
const char* cache_kind_name(CacheKind kind);

struct KvCacheGroup {
  CacheKind kind = CacheKind::full;
  std::vector<int64_t> layers;  // the model's layers in this group
  int64_t window = 0;           // sliding_window: the positions a row attends to, itself included
  int32_t source = -1;          // shared: the full or sliding-window group whose pages it reads
};

// The groups of a model's layers: docs/SPEC.md's decoder is one full-attention group; a hybrid
// stack has a page group per attention layer that keeps keys and values (sliding-window or full),
// a shared group of the cross layers and a recurrent group of the Mamba layers.
std::vector<KvCacheGroup> kv_cache_groups(const model::ModelConfig& config);
// The layers one block holds (kv_pool.h): the most of a page group; group g's i-th layer is the
// block's i-th.
int64_t kv_block_layers(const std::vector<KvCacheGroup>& groups);
// The most blocks a sequence of `tokens` positions holds at once, every page group counted (a
// sliding window's no more than its window and two).
int64_t sequence_blocks(const std::vector<KvCacheGroup>& groups, int64_t tokens, int64_t block_tokens);
// The longest sequence, at most `limit`, whose blocks fit in `blocks`.
int64_t sequence_tokens(const std::vector<KvCacheGroup>& groups, int64_t blocks, int64_t block_tokens, int64_t limit);

enum class PrefixCache { on, off_by_option, off_recurrent_state };
const char* prefix_cache_name(PrefixCache mode);  // "on", "off (option)", "off (recurrent state ...)"

class KvCacheManager {
 public:
  using SeqId = uint64_t;

  // Page groups draw from `blocks` (which must outlive the manager); recurrent groups from a pool
  // of `state_slots` slots (at least one per sequence that runs at once and per lookahead token
  // of each; needed only with a recurrent group). Bad groups are errors naming the group.
  KvCacheManager(std::vector<KvCacheGroup> groups, BlockPool& blocks, int64_t state_slots, bool prefix_cache);

  const std::vector<KvCacheGroup>& groups() const { return groups_; }
  int64_t block_tokens() const { return P_; }
  PrefixCache prefix_cache() const { return prefix_cache_; }

  // A sequence is known from its first reuse_prefix or allocate_slots until free().
  // Its leading positions whose keys, values and state are stored.
  int64_t computed(SeqId id) const;
  // For a sequence that holds nothing: takes the longest run of full prompt blocks the prefix
  // cache holds (leaving at least one prompt token to compute, for its logits); returns computed().
  int64_t reuse_prefix(SeqId id, std::span<const int32_t> prompt);
  // The most of `tokens` next positions that allocate_slots(id, n) could give now.
  int64_t fit(SeqId id, int64_t tokens) const;
  // Slots for positions [0, computed + tokens + lookahead) in every group, and for each recurrent
  // group the sequence's state slot and one more per lookahead position: all or nothing.
  bool allocate_slots(SeqId id, int64_t tokens, int64_t lookahead = 0);
  // After the step that ran the positions the last allocate_slots gave: the first `kept` of them
  // are computed, kept in [tokens, tokens + lookahead]; the rest are rolled back. Then full
  // prompt blocks are registered in the prefix cache and window blocks no row reads again are
  // given back.
  void commit(SeqId id, std::span<const int32_t> prompt, int64_t kept);
  // Gives back everything the sequence holds (finished, cancelled or preempted); an unknown id is
  // ignored.
  void free(SeqId id);

  // The sequence's table in a group:
  // - full, sliding_window: the blocks; position p is in block [p / block_tokens] (-1: given back);
  // - shared: its source group's;
  // - recurrent: the state slots. [0] holds the state after the computed positions; a step
  //   reads it and leaves there the state after its last row. With lookahead, [1 + j] receives
  //   the state after the step's new rows and j of its lookahead rows (j < lookahead), and
  //   commit makes the kept one [0].
  // Valid until the next call that changes the sequence.
  std::span<const int32_t> table(SeqId id, int32_t group) const;

  int64_t blocks() const { return blocks_.blocks(); }
  int64_t used_blocks() const { return blocks_.used(); }
  int64_t cached_blocks() const { return blocks_.cached(); }
  int64_t free_blocks() const { return blocks_.free_blocks(); }
  int64_t used_state_slots() const { return states_ ? states_->used() : 0; }

 private:
  struct Held {
    int64_t computed = 0;
    int64_t length = 0;                 // entries of each page group's table
    int64_t tokens = 0, lookahead = 0;  // of the last allocate_slots, until its commit
    int64_t registered = 0;             // leading blocks in the prefix cache (registered or found there)
    std::vector<std::vector<int32_t>> tables;  // per group (shared: empty)
    std::vector<uint64_t> chain;        // per group: the prefix key of block registered - 1
    std::vector<int32_t> parent;        // per group: block registered - 1, or the group's root
  };
  Held& held(SeqId id);
  const Held* find(SeqId id) const;
  int64_t page_groups() const { return static_cast<int64_t>(page_groups_.size()); }
  // State slots a step with this lookahead needs beyond those the sequence holds.
  int64_t state_need(const Held& h, int64_t lookahead) const;
  void give_back_window(Held& h);
  void register_prompt_blocks(Held& h, std::span<const int32_t> prompt);

  std::vector<KvCacheGroup> groups_;
  std::vector<int32_t> page_groups_, state_groups_;  // the full and sliding-window ones, the recurrent ones
  BlockPool& blocks_;
  std::unique_ptr<BlockPool> states_;
  int64_t P_;
  PrefixCache prefix_cache_;
  std::unordered_map<SeqId, Held> held_;
};

}  // namespace difftx::infer
