#include "data/bpe.h"

#include <climits>
#include <cstring>
#include <queue>
#include <string>

#include "core/error.h"

namespace difftx::data {
namespace {

constexpr int32_t kNoRank = INT32_MAX;
constexpr size_t kScanMaxLength = 256;  // longer pieces take the heap path

int32_t rank_of(const TokenTable& table, std::string_view piece, size_t begin, size_t end) {
  const int32_t r = table.find(piece.data() + begin, end - begin);
  return r < 0 ? kNoRank : r;
}

void emit(const TokenTable& table, std::string_view piece, size_t begin, size_t end,
          std::vector<int32_t>& out) {
  const int32_t r = table.find(piece.data() + begin, end - begin);
  DIFFTX_CHECK(r >= 0, "bpe: no token for bytes [", begin, ", ", end, ") of a piece");
  out.push_back(r);
}

}  // namespace

void bpe_encode(const TokenTable& table, std::string_view piece, std::vector<int32_t>& out) {
  if (piece.size() <= kScanMaxLength)
    bpe_encode_scan(table, piece, out);
  else
    bpe_encode_heap(table, piece, out);
}

void bpe_encode_scan(const TokenTable& table, std::string_view piece, std::vector<int32_t>& out) {
  const size_t n = piece.size();
  if (n == 0) return;
  if (n == 1) return emit(table, piece, 0, 1, out);
  // start[0..parts] are part boundaries (start[parts] == n); pair[i] is the rank of parts i and
  // i+1 merged. Short pieces live on the stack.
  uint32_t start_stack[kScanMaxLength + 1];
  int32_t pair_stack[kScanMaxLength];
  std::vector<uint32_t> start_heap;
  std::vector<int32_t> pair_heap;
  uint32_t* start = start_stack;
  int32_t* pair = pair_stack;
  if (n > kScanMaxLength) {
    start_heap.resize(n + 1);
    pair_heap.resize(n);
    start = start_heap.data();
    pair = pair_heap.data();
  }
  size_t parts = n;
  for (size_t i = 0; i <= n; ++i) start[i] = static_cast<uint32_t>(i);
  for (size_t i = 0; i + 1 < n; ++i) pair[i] = rank_of(table, piece, i, i + 2);

  while (parts > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < parts; ++i)
      if (pair[i] < pair[best]) best = i;
    if (pair[best] == kNoRank) break;
    // Merge parts best and best+1: drop boundary best+1 and one pair slot, then recompute the
    // pairs on either side of the merged part.
    std::memmove(start + best + 1, start + best + 2, (parts - best - 1) * sizeof(uint32_t));
    std::memmove(pair + best, pair + best + 1, (parts - best - 2) * sizeof(int32_t));
    --parts;
    if (best + 1 < parts) pair[best] = rank_of(table, piece, start[best], start[best + 2]);
    if (best > 0) pair[best - 1] = rank_of(table, piece, start[best - 1], start[best + 1]);
  }
  for (size_t i = 0; i < parts; ++i) emit(table, piece, start[i], start[i + 1], out);
}

void bpe_encode_heap(const TokenTable& table, std::string_view piece, std::vector<int32_t>& out) {
  const auto n = static_cast<uint32_t>(piece.size());
  if (n == 0) return;
  // Parts are named by their first byte; next/prev link the live ones.
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> next(n), prev(n);
  for (uint32_t i = 0; i < n; ++i) {
    next[i] = i + 1;
    prev[i] = i == 0 ? kNone : i - 1;
  }
  // A candidate merge of parts left and right, where right ends at end. It is stale unless both
  // parts still have exactly these bounds.
  struct Candidate {
    int32_t rank;
    uint32_t left, right, end;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;  // lowest rank, then leftmost
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto consider = [&](uint32_t left, uint32_t right, uint32_t end) {
    const int32_t r = table.find(piece.data() + left, end - left);
    if (r >= 0) heap.push({r, left, right, end});
  };
  for (uint32_t i = 0; i + 1 < n; ++i) consider(i, i + 1, i + 2);

  std::vector<bool> alive(n, true);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    if (!alive[c.left] || next[c.left] != c.right || next[c.right] != c.end) continue;
    alive[c.right] = false;
    next[c.left] = c.end;
    if (c.end < n) prev[c.end] = c.left;
    if (prev[c.left] != kNone) consider(prev[c.left], c.left, c.end);
    if (c.end < n) consider(c.left, c.end, next[c.end]);
  }
  for (uint32_t i = 0; i < n; i = next[i]) emit(table, piece, i, next[i], out);
}

void bpe_encode_reference(const TokenTable& table, std::string_view piece,
                          std::vector<int32_t>& out) {
  std::vector<std::string> parts;
  for (char c : piece) parts.emplace_back(1, c);
  while (parts.size() > 1) {
    int best = -1;
    int32_t best_rank = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const int32_t r = table.find(parts[i] + parts[i + 1]);
      if (r >= 0 && (best < 0 || r < best_rank)) {
        best = static_cast<int>(i);
        best_rank = r;
      }
    }
    if (best < 0) break;
    parts[best] += parts[best + 1];
    parts.erase(parts.begin() + best + 1);
  }
  for (const std::string& p : parts) {
    const int32_t r = table.find(p);
    DIFFTX_CHECK(r >= 0, "bpe: no token for a part of ", p.size(), " bytes");
    out.push_back(r);
  }
}

}  // namespace difftx::data
