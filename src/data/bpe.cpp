#include "data/bpe.h"

#include <cstring>
#include <queue>
#include <string>

#include "core/error.h"

namespace difftx::data {
namespace {

constexpr size_t kScanMaxLength = 256;  // longer pieces take the heap path

// The two merge rules of bpe.h, as types so that each merge loop is compiled for both. A Step
// is a possible merge: rank(step) its priority (kNoMerge: none), id(step) the token it makes.
// Under tiktoken's rule both are the token's rank, so a step is one int.
struct RankRule {
  using Step = int32_t;
  const TokenTable& table;
  int32_t byte_id(char b) const { return table.byte_rank(static_cast<unsigned char>(b)); }
  Step merge(int32_t, int32_t, const char* bytes, size_t length) const {
    const int32_t r = table.find(bytes, length);
    return r < 0 ? kNoMerge : r;
  }
  static int32_t rank(Step s) { return s; }
  static int32_t id(Step s) { return s; }
};

struct PairRule {
  using Step = MergeStep;
  const TokenTable& vocab;
  const PairMerges& merges;
  int32_t byte_id(char b) const { return vocab.byte_rank(static_cast<unsigned char>(b)); }
  Step merge(int32_t left, int32_t right, const char*, size_t) const { return merges.find(left, right); }
  static int32_t rank(Step s) { return s.rank; }
  static int32_t id(Step s) { return s.id; }
};

template <typename Fn>
void with_rule(const MergeRule& rule, Fn&& fn) {
  if (rule.merges == nullptr)
    fn(RankRule{rule.vocab});
  else
    fn(PairRule{rule.vocab, *rule.merges});
}

int32_t checked_byte_id(const auto& rule, char b) {
  const int32_t id = rule.byte_id(b);
  DIFFTX_CHECK(id >= 0, "bpe: no token for the byte ", static_cast<int>(static_cast<unsigned char>(b)));
  return id;
}

template <typename Rule>
void scan(const Rule& rule, std::string_view piece, std::vector<int32_t>& out) {
  const size_t n = piece.size();
  if (n == 0) return;
  if (n == 1) return out.push_back(checked_byte_id(rule, piece[0]));
  // start[0..parts] are part boundaries (start[parts] == n), id[i] the token of part i, pair[i]
  // the merge of parts i and i+1. Short pieces live on the stack.
  uint32_t start_stack[kScanMaxLength + 1];
  int32_t id_stack[kScanMaxLength];
  using Step = typename Rule::Step;
  Step pair_stack[kScanMaxLength];
  std::vector<uint32_t> start_heap;
  std::vector<int32_t> id_heap;
  std::vector<Step> pair_heap;
  uint32_t* start = start_stack;
  int32_t* id = id_stack;
  Step* pair = pair_stack;
  if (n > kScanMaxLength) {
    start_heap.resize(n + 1);
    id_heap.resize(n);
    pair_heap.resize(n);
    start = start_heap.data();
    id = id_heap.data();
    pair = pair_heap.data();
  }
  const char* bytes = piece.data();
  auto merge_at = [&](size_t i) {
    return rule.merge(id[i], id[i + 1], bytes + start[i], start[i + 2] - start[i]);
  };
  size_t parts = n;
  for (size_t i = 0; i <= n; ++i) start[i] = static_cast<uint32_t>(i);
  for (size_t i = 0; i < n; ++i) id[i] = checked_byte_id(rule, bytes[i]);
  for (size_t i = 0; i + 1 < n; ++i) pair[i] = merge_at(i);

  while (parts > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < parts; ++i)
      if (Rule::rank(pair[i]) < Rule::rank(pair[best])) best = i;
    if (Rule::rank(pair[best]) == kNoMerge) break;
    // Merge parts best and best+1: drop boundary best+1, one id and one pair slot, then
    // recompute the pairs on either side of the merged part.
    id[best] = Rule::id(pair[best]);
    std::memmove(start + best + 1, start + best + 2, (parts - best - 1) * sizeof(uint32_t));
    std::memmove(id + best + 1, id + best + 2, (parts - best - 2) * sizeof(int32_t));
    std::memmove(pair + best, pair + best + 1, (parts - best - 2) * sizeof(Step));
    --parts;
    if (best + 1 < parts) pair[best] = merge_at(best);
    if (best > 0) pair[best - 1] = merge_at(best - 1);
  }
  out.insert(out.end(), id, id + parts);
}

template <typename Rule>
void heap(const Rule& rule, std::string_view piece, std::vector<int32_t>& out) {
  const auto n = static_cast<uint32_t>(piece.size());
  if (n == 0) return;
  // Parts are named by their first byte; next/prev link the live ones; id is each part's token.
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> next(n), prev(n);
  std::vector<int32_t> id(n);
  for (uint32_t i = 0; i < n; ++i) {
    next[i] = i + 1;
    prev[i] = i == 0 ? kNone : i - 1;
    id[i] = checked_byte_id(rule, piece[i]);
  }
  // A candidate merge of parts left and right, where right ends at end. It is stale unless both
  // parts still have exactly these bounds.
  struct Candidate {
    int32_t rank, id;
    uint32_t left, right, end;
    bool operator>(const Candidate& o) const {  // lowest priority first, then leftmost
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](uint32_t left, uint32_t right, uint32_t end) {
    const auto s = rule.merge(id[left], id[right], piece.data() + left, end - left);
    if (Rule::rank(s) != kNoMerge) queue.push({Rule::rank(s), Rule::id(s), left, right, end});
  };
  for (uint32_t i = 0; i + 1 < n; ++i) consider(i, i + 1, i + 2);

  std::vector<bool> alive(n, true);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    if (!alive[c.left] || next[c.left] != c.right || next[c.right] != c.end) continue;
    alive[c.right] = false;
    next[c.left] = c.end;
    id[c.left] = c.id;
    if (c.end < n) prev[c.end] = c.left;
    if (prev[c.left] != kNone) consider(prev[c.left], c.left, c.end);
    if (c.end < n) consider(c.left, c.end, next[c.end]);
  }
  for (uint32_t i = 0; i < n; i = next[i]) out.push_back(id[i]);
}

template <typename Rule>
void reference(const Rule& rule, std::string_view piece, std::vector<int32_t>& out) {
  struct Part {
    std::string bytes;
    int32_t id;
  };
  std::vector<Part> parts;
  for (char c : piece) parts.push_back({std::string(1, c), checked_byte_id(rule, c)});
  while (parts.size() > 1) {
    int best = -1;
    int32_t best_rank = kNoMerge, best_id = -1;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const std::string joined = parts[i].bytes + parts[i + 1].bytes;
      const auto s = rule.merge(parts[i].id, parts[i + 1].id, joined.data(), joined.size());
      if (Rule::rank(s) != kNoMerge && (best < 0 || Rule::rank(s) < best_rank)) {
        best = static_cast<int>(i);
        best_rank = Rule::rank(s);
        best_id = Rule::id(s);
      }
    }
    if (best < 0) break;
    parts[best] = {parts[best].bytes + parts[best + 1].bytes, best_id};
    parts.erase(parts.begin() + best + 1);
  }
  for (const Part& p : parts) out.push_back(p.id);
}

}  // namespace

void bpe_encode(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& out) {
  if (piece.size() <= kScanMaxLength)
    bpe_encode_scan(rule, piece, out);
  else
    bpe_encode_heap(rule, piece, out);
}

void bpe_encode_scan(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& out) {
  with_rule(rule, [&](const auto& r) { scan(r, piece, out); });
}

void bpe_encode_heap(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& out) {
  with_rule(rule, [&](const auto& r) { heap(r, piece, out); });
}

void bpe_encode_reference(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& out) {
  with_rule(rule, [&](const auto& r) { reference(r, piece, out); });
}

}  // namespace difftx::data
