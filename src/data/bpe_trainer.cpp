#include "data/bpe_trainer.h"

#include <omp.h>

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/parallel_errors.h"
#include "data/encodings.h"
#include "data/split_pattern.h"
#include "data/utf8.h"

namespace difftx::data {
namespace {

uint64_t pair_key(int32_t a, int32_t b) {
  return static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32 | static_cast<uint32_t>(b);
}
int32_t left_of(uint64_t key) { return static_cast<int32_t>(key >> 32); }
int32_t right_of(uint64_t key) { return static_cast<int32_t>(key & 0xFFFFFFFFu); }

// A heap entry: the count a pair had when pushed. Stale once the pair's count changed (every
// change pushes a fresh entry, so each live pair always has one current entry).
struct Candidate {
  int64_t count;
  uint64_t key;
  bool operator<(const Candidate& o) const {  // "lower priority than"
    return count != o.count ? count < o.count : key > o.key;
  }
};

struct Word {
  std::vector<int32_t> ids;
  int64_t count;
};

}  // namespace

std::vector<PieceCount> count_pieces(std::span<const std::string_view> documents,
                                     const std::string& pattern) {
  const SplitPattern split(pattern);
  for (size_t d = 0; d < documents.size(); ++d)
    if (valid_utf8_prefix(documents[d]) != documents[d].size())
      check_utf8(documents[d], "bpe training: document " + std::to_string(d));

  const int threads = omp_get_max_threads();
  std::vector<std::unordered_map<std::string_view, int64_t>> local(threads);
  ParallelErrors errors;  // the split's errors (match limits) and the maps' growth
  const int64_t n = static_cast<int64_t>(documents.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t d = 0; d < n; ++d) {
    errors.run(d, [&] {
      auto& counts = local[omp_get_thread_num()];
      split.split(documents[d], [&](std::string_view piece) { ++counts[piece]; });
    });
  }
  errors.rethrow();
  std::unordered_map<std::string_view, int64_t> total = std::move(local[0]);
  for (int t = 1; t < threads; ++t)
    for (const auto& [piece, n] : local[t]) total[piece] += n;
  std::vector<PieceCount> pieces;
  pieces.reserve(total.size());
  for (const auto& [piece, n] : total) pieces.push_back({piece, n});
  std::sort(pieces.begin(), pieces.end(),
            [](const PieceCount& a, const PieceCount& b) { return a.piece < b.piece; });
  return pieces;
}

Tokenizer train_bpe(std::span<const std::string_view> documents,
                    const BpeTrainingOptions& options) {
  DIFFTX_CHECK(options.vocab_size >= 257, "bpe training: vocab size ", options.vocab_size,
               " is below 257 (256 bytes and the end-of-text token)");
  DIFFTX_CHECK(options.vocab_size <= (1 << 24), "bpe training: vocab size ", options.vocab_size,
               " is above 2^24");
  const std::string pattern =
      options.pattern.empty() ? default_training_pattern() : options.pattern;
  const int64_t merges_wanted = options.vocab_size - 257;

  TokenTable table;
  for (int b = 0; b < 256; ++b) table.insert(std::string(1, static_cast<char>(b)), b);

  std::vector<Word> words;
  for (const PieceCount& p : count_pieces(documents, pattern)) {
    if (p.piece.size() < 2) continue;  // no pairs: nothing to learn from
    Word w{{}, p.count};
    for (unsigned char c : p.piece) w.ids.push_back(c);
    words.push_back(std::move(w));
  }

  std::unordered_map<uint64_t, int64_t> pair_count;
  std::unordered_map<uint64_t, std::vector<int32_t>> pair_words;  // may hold stale entries
  auto add_pairs = [&](int32_t w, int64_t sign, std::unordered_set<uint64_t>* changed) {
    const Word& word = words[w];
    for (size_t i = 0; i + 1 < word.ids.size(); ++i) {
      const uint64_t key = pair_key(word.ids[i], word.ids[i + 1]);
      pair_count[key] += sign * word.count;
      if (changed) changed->insert(key);
      if (sign > 0) {
        auto& list = pair_words[key];
        if (list.empty() || list.back() != w) list.push_back(w);
      }
    }
  };
  for (size_t w = 0; w < words.size(); ++w) add_pairs(static_cast<int32_t>(w), +1, nullptr);
  std::priority_queue<Candidate> heap;
  for (const auto& [key, n] : pair_count) heap.push({n, key});

  std::vector<int64_t> visited(words.size(), -1);
  int64_t merges = 0, step = 0;
  int32_t next_rank = 256;
  while (merges < merges_wanted && !heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    auto found = pair_count.find(top.key);
    if (found == pair_count.end() || found->second != top.count) continue;  // stale
    if (top.count < 2) break;
    const int32_t a = left_of(top.key), b = right_of(top.key);
    std::string bytes(table.bytes_of(a));
    bytes += table.bytes_of(b);
    // Two different pairs can spell the same bytes ("a"+"bc", "ab"+"c"): the second one then
    // merges into the existing token instead of adding a duplicate.
    int32_t merged = table.find(bytes);
    if (merged < 0) {
      merged = next_rank++;
      table.insert(bytes, merged);
      ++merges;
    }
    std::unordered_set<uint64_t> changed;
    const std::vector<int32_t> holders = std::move(pair_words[top.key]);
    pair_words.erase(top.key);
    for (int32_t w : holders) {
      if (visited[w] == step) continue;
      visited[w] = step;
      std::vector<int32_t>& ids = words[w].ids;
      bool contains = false;
      for (size_t i = 0; i + 1 < ids.size() && !contains; ++i)
        contains = ids[i] == a && ids[i + 1] == b;
      if (!contains) continue;
      add_pairs(w, -1, &changed);
      std::vector<int32_t> out;
      out.reserve(ids.size());
      for (size_t i = 0; i < ids.size(); ++i) {
        if (i + 1 < ids.size() && ids[i] == a && ids[i + 1] == b) {
          out.push_back(merged);
          ++i;
        } else {
          out.push_back(ids[i]);
        }
      }
      ids = std::move(out);
      add_pairs(w, +1, &changed);
    }
    std::vector<uint64_t> sorted_changed(changed.begin(), changed.end());
    std::sort(sorted_changed.begin(), sorted_changed.end());
    for (uint64_t key : sorted_changed) {
      auto it = pair_count.find(key);
      if (it->second > 0)
        heap.push({it->second, key});
      else
        pair_count.erase(it);
    }
    ++step;
    if (options.interrupt) options.interrupt();
    if (options.progress && (merges % 256 == 0 || merges == merges_wanted))
      options.progress(merges, merges_wanted);
  }
  const std::string name =
      options.name.empty() ? "bpe-" + std::to_string(options.vocab_size) : options.name;
  return Tokenizer(name, std::move(table), pattern, {{kEndOfText, next_rank}});
}

}  // namespace difftx::data
