#include "infer/kv_cache_manager.h"

#include <algorithm>
#include <set>

#include "core/enum_names.h"
#include "core/error.h"

namespace difftx::infer {

using model::LayerKind;

const char* cache_kind_name(CacheKind kind) {
  static constexpr EnumName<CacheKind> names[] = {{CacheKind::full, "full"},
                                                  {CacheKind::sliding_window, "sliding_window"},
                                                  {CacheKind::recurrent, "recurrent"},
                                                  {CacheKind::shared, "shared"}};
  return name_of(names, kind);
}

const char* prefix_cache_name(PrefixCache mode) {
  static constexpr EnumName<PrefixCache> names[] = {
      {PrefixCache::on, "on"},
      {PrefixCache::off_by_option, "off (option)"},
      {PrefixCache::off_recurrent_state, "off (recurrent state is not snapshotted at block boundaries)"}};
  return name_of(names, mode);
}

std::vector<KvCacheGroup> kv_cache_groups(const model::ModelConfig& config) {
  if (!config.hybrid) {
    KvCacheGroup all{CacheKind::full, {}, 0, -1};
    for (int64_t l = 0; l < config.num_hidden_layers; ++l) all.layers.push_back(l);
    return {all};
  }
  // A page group per attention layer with keys and values of its own, so that a block holds one
  // layer and a window's short table wastes nothing; the cross layers read the full layer's; the
  // Mamba layers' states are one slot per sequence; the GMU layers keep nothing.
  const model::HybridConfig& h = *config.hybrid;
  std::vector<KvCacheGroup> groups;
  KvCacheGroup shared{CacheKind::shared, {}, 0, -1}, recurrent{CacheKind::recurrent, {}, 0, -1};
  for (int64_t l = 0; l < config.num_hidden_layers; ++l) switch (h.layers[l]) {
      case LayerKind::sliding_attention:
        groups.push_back({CacheKind::sliding_window, {l}, h.sliding_window, -1});
        break;
      case LayerKind::full_attention:
        shared.source = static_cast<int32_t>(groups.size());
        groups.push_back({CacheKind::full, {l}, 0, -1});
        break;
      case LayerKind::cross_attention: shared.layers.push_back(l); break;
      case LayerKind::mamba:
      case LayerKind::memory_mamba: recurrent.layers.push_back(l); break;
      case LayerKind::gmu: break;
    }
  if (!shared.layers.empty()) groups.push_back(shared);
  if (!recurrent.layers.empty()) groups.push_back(recurrent);
  return groups;
}

int64_t kv_block_layers(const std::vector<KvCacheGroup>& groups) {
  int64_t most = 0;
  for (const KvCacheGroup& g : groups)
    if (g.kind == CacheKind::full || g.kind == CacheKind::sliding_window)
      most = std::max(most, static_cast<int64_t>(g.layers.size()));
  return most;
}

int64_t sequence_blocks(const std::vector<KvCacheGroup>& groups, int64_t tokens, int64_t block_tokens) {
  const int64_t all = (tokens + block_tokens - 1) / block_tokens;
  int64_t blocks = 0;
  for (const KvCacheGroup& g : groups)
    if (g.kind == CacheKind::full) blocks += all;
    else if (g.kind == CacheKind::sliding_window)  // the window's blocks, one partly read, one for the next step
      blocks += std::min(all, (g.window + block_tokens - 1) / block_tokens + 2);
  return blocks;
}

int64_t sequence_tokens(const std::vector<KvCacheGroup>& groups, int64_t blocks, int64_t block_tokens,
                        int64_t limit) {
  int64_t lo = 0, hi = limit;  // sequence_blocks grows with the tokens: the last that fits
  while (lo < hi) {
    const int64_t mid = hi - (hi - lo) / 2;
    if (sequence_blocks(groups, mid, block_tokens) <= blocks) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

KvCacheManager::KvCacheManager(std::vector<KvCacheGroup> groups, BlockPool& blocks, int64_t state_slots,
                               bool prefix_cache)
    : groups_(std::move(groups)), blocks_(blocks), P_(blocks.block_tokens()) {
  DIFFTX_CHECK(!groups_.empty() && groups_.size() < (size_t{1} << 16), "KV cache: ", groups_.size(),
               " layer groups must be in [1, 65535]");
  std::set<int64_t> layers;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const KvCacheGroup& group = groups_[g];
    for (int64_t l : group.layers)
      DIFFTX_CHECK(l >= 0 && layers.insert(l).second, "KV cache group ", g, ": layer ", l,
                   " is negative or in another group");
    switch (group.kind) {
      case CacheKind::sliding_window:
        DIFFTX_CHECK(group.window >= 1, "KV cache group ", g, ": a sliding window of ", group.window,
                     " positions must be positive");
        [[fallthrough]];
      case CacheKind::full: page_groups_.push_back(static_cast<int32_t>(g)); break;
      case CacheKind::recurrent: state_groups_.push_back(static_cast<int32_t>(g)); break;
      case CacheKind::shared: {
        const int32_t s = group.source;
        DIFFTX_CHECK(s >= 0 && s < static_cast<int32_t>(groups_.size()) &&
                         (groups_[s].kind == CacheKind::full || groups_[s].kind == CacheKind::sliding_window),
                     "KV cache group ", g, ": shared reads group ", s, ", which is not a full or sliding-window group");
        break;
      }
    }
  }
  if (!state_groups_.empty()) {
    DIFFTX_CHECK(state_slots >= 1, "KV cache: recurrent groups need state slots (", state_slots, " given)");
    states_ = std::make_unique<BlockPool>(state_slots, P_);
  }
  prefix_cache_ = !prefix_cache            ? PrefixCache::off_by_option
                  : !state_groups_.empty() ? PrefixCache::off_recurrent_state
                                           : PrefixCache::on;
}

KvCacheManager::Held& KvCacheManager::held(SeqId id) {
  auto [it, added] = held_.try_emplace(id);
  Held& h = it->second;
  if (added) {
    h.tables.resize(groups_.size());
    h.chain.resize(groups_.size());
    h.parent.resize(groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) {  // each group's chain has a root of its own
      h.chain[g] = g;
      h.parent[g] = -1 - static_cast<int32_t>(g);
    }
  }
  return h;
}

const KvCacheManager::Held* KvCacheManager::find(SeqId id) const {
  const auto it = held_.find(id);
  return it == held_.end() ? nullptr : &it->second;
}

int64_t KvCacheManager::computed(SeqId id) const {
  const Held* h = find(id);
  return h ? h->computed : 0;
}

int64_t KvCacheManager::state_need(const Held& h, int64_t lookahead) const {
  int64_t need = 0;
  for (int32_t g : state_groups_) {
    const int64_t have = h.tables.empty() ? 0 : static_cast<int64_t>(h.tables[g].size());
    need += std::max<int64_t>(0, 1 + lookahead - have);
  }
  return need;
}

int64_t KvCacheManager::fit(SeqId id, int64_t tokens) const {
  static const Held nothing;
  const Held* found = find(id);
  const Held& h = found ? *found : nothing;
  if (tokens <= 0 || state_need(h, 0) > (states_ ? states_->free_blocks() : 0)) return 0;
  if (page_groups_.empty()) return tokens;
  const int64_t more = blocks_.free_blocks() / page_groups();
  return std::clamp<int64_t>((h.length + more) * P_ - h.computed, 0, tokens);
}

bool KvCacheManager::allocate_slots(SeqId id, int64_t tokens, int64_t lookahead) {
  DIFFTX_CHECK(tokens >= 0 && lookahead >= 0 && tokens + lookahead >= 1, "KV cache: slots for ", tokens,
               " tokens and ", lookahead, " lookahead ones");
  Held& h = held(id);
  const int64_t length = std::max(h.length, (h.computed + tokens + lookahead + P_ - 1) / P_);
  if ((length - h.length) * page_groups() > blocks_.free_blocks()) return false;
  if (state_need(h, lookahead) > (states_ ? states_->free_blocks() : 0)) return false;
  for (int32_t g : page_groups_)
    while (static_cast<int64_t>(h.tables[g].size()) < length) h.tables[g].push_back(blocks_.allocate());
  for (int32_t g : state_groups_)
    while (static_cast<int64_t>(h.tables[g].size()) < 1 + lookahead) h.tables[g].push_back(states_->allocate());
  h.length = length;
  h.tokens = tokens;
  h.lookahead = lookahead;
  return true;
}

void KvCacheManager::commit(SeqId id, std::span<const int32_t> prompt, int64_t kept) {
  Held& h = held(id);
  DIFFTX_CHECK(kept >= h.tokens && kept <= h.tokens + h.lookahead, "KV cache: commit of ", kept,
               " positions after slots for ", h.tokens, " tokens and ", h.lookahead, " lookahead ones");
  h.computed += kept;
  // Roll back what was not kept: the blocks past the computed positions, and the state slots but
  // the one that holds the state after the last kept position.
  const int64_t length = (h.computed + P_ - 1) / P_;
  for (int32_t g : page_groups_)
    while (static_cast<int64_t>(h.tables[g].size()) > length) {
      blocks_.release(h.tables[g].back());
      h.tables[g].pop_back();
    }
  h.length = std::min(h.length, length);
  const int64_t accepted = kept - h.tokens;
  for (int32_t g : state_groups_) {
    std::vector<int32_t>& slots = h.tables[g];
    if (accepted < h.lookahead) std::swap(slots[0], slots[1 + accepted]);
    while (slots.size() > 1) {
      states_->release(slots.back());
      slots.pop_back();
    }
  }
  h.tokens = h.lookahead = 0;
  if (prefix_cache_ == PrefixCache::on) register_prompt_blocks(h, prompt);
  give_back_window(h);
}

void KvCacheManager::register_prompt_blocks(Held& h, std::span<const int32_t> prompt) {
  const int64_t full = std::min<int64_t>(h.computed, static_cast<int64_t>(prompt.size())) / P_;
  for (; h.registered < full; ++h.registered) {
    const std::span<const int32_t> tokens = prompt.subspan(h.registered * P_, P_);
    for (int32_t g : page_groups_) {
      const uint64_t key = BlockPool::chain_key(h.chain[g], tokens);
      const int32_t block = h.tables[g][h.registered];
      blocks_.register_block(block, key, h.parent[g], tokens);
      h.chain[g] = key;
      h.parent[g] = block;
    }
  }
}

int64_t KvCacheManager::reuse_prefix(SeqId id, std::span<const int32_t> prompt) {
  Held& h = held(id);
  DIFFTX_CHECK(h.computed == 0 && h.length == 0, "KV cache: prefix reuse for a sequence that holds blocks");
  if (prefix_cache_ != PrefixCache::on || page_groups_.empty()) return h.computed;
  const int64_t full = (static_cast<int64_t>(prompt.size()) - 1) / P_;
  std::vector<uint64_t> keys(groups_.size());
  for (; h.registered < full; ++h.registered) {
    const std::span<const int32_t> tokens = prompt.subspan(h.registered * P_, P_);
    size_t found = 0;
    for (; found < page_groups_.size(); ++found) {
      const int32_t g = page_groups_[found];
      keys[g] = BlockPool::chain_key(h.chain[g], tokens);
      const int32_t block = blocks_.lookup(keys[g], h.parent[g], tokens);
      if (block < 0) break;
      h.tables[g].push_back(block);
    }
    if (found < page_groups_.size()) {  // a miss in one group: block i is no hit
      for (size_t k = 0; k < found; ++k) {
        std::vector<int32_t>& table = h.tables[page_groups_[k]];
        blocks_.release(table.back());
        table.pop_back();
      }
      break;
    }
    for (int32_t g : page_groups_) {
      h.chain[g] = keys[g];
      h.parent[g] = h.tables[g].back();
    }
    ++h.length;
    h.computed += P_;
  }
  give_back_window(h);
  return h.computed;
}

void KvCacheManager::give_back_window(Held& h) {
  for (int32_t g : page_groups_) {
    if (groups_[g].kind != CacheKind::sliding_window) continue;
    const int64_t first_read = h.computed - groups_[g].window + 1;  // by the next row
    if (first_read <= 0) continue;
    std::vector<int32_t>& table = h.tables[g];
    for (int64_t i = first_read / P_ - 1; i >= 0 && table[i] >= 0; --i) {
      blocks_.release(table[i]);
      table[i] = -1;
    }
  }
}

void KvCacheManager::free(SeqId id) {
  const auto it = held_.find(id);
  if (it == held_.end()) return;
  Held& h = it->second;
  for (int32_t g : page_groups_)
    for (int32_t block : h.tables[g])
      if (block >= 0) blocks_.release(block);
  for (int32_t g : state_groups_)
    for (int32_t slot : h.tables[g]) states_->release(slot);
  held_.erase(it);
}

std::span<const int32_t> KvCacheManager::table(SeqId id, int32_t group) const {
  DIFFTX_CHECK(group >= 0 && group < static_cast<int32_t>(groups_.size()), "KV cache: no group ", group);
  const Held* h = find(id);
  if (!h) return {};
  const KvCacheGroup& g = groups_[group];
  return h->tables[g.kind == CacheKind::shared ? g.source : group];
}

}  // namespace difftx::infer
