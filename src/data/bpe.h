// Byte-pair encoding of one piece (one match of the split pattern): start from single bytes and
// repeatedly merge the adjacent pair of lowest priority (the leftmost such pair on ties) until
// no adjacent pair merges. Appends the ids of the final parts to out. Two rules say which pairs
// merge (MergeRule); one merge loop serves both. Every single byte must be a token (checked by
// the tokenizer).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "data/pair_merges.h"
#include "data/token_table.h"

namespace difftx::data {

// tiktoken's rule when merges is null: two parts merge when their concatenated bytes are a
// token, and that token's rank is the priority. Hugging Face's rule otherwise: two parts merge
// only when their id pair is in the merge list, with the list's priority and result.
struct MergeRule {
  const TokenTable& vocab;
  const PairMerges* merges = nullptr;
};

// Picks the fast path by length.
void bpe_encode(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& out);

// The two fast paths, public so that tests can compare each with the reference twin.
// O(n^2): rescans an array of part boundaries; fastest for the short pieces of ordinary text.
void bpe_encode_scan(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& out);
// O(n log n): a priority queue over a linked list of parts; for long pieces (a run of 100 KB of
// letters would take minutes on the scan path).
void bpe_encode_heap(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& out);

// The reference twin: strings, concatenation and a full rescan per merge. Slow and obvious.
void bpe_encode_reference(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& out);

// tiktoken's rule over a table of ranks.
inline void bpe_encode(const TokenTable& table, std::string_view piece, std::vector<int32_t>& out) {
  bpe_encode(MergeRule{table}, piece, out);
}
inline void bpe_encode_scan(const TokenTable& table, std::string_view piece, std::vector<int32_t>& out) {
  bpe_encode_scan(MergeRule{table}, piece, out);
}
inline void bpe_encode_heap(const TokenTable& table, std::string_view piece, std::vector<int32_t>& out) {
  bpe_encode_heap(MergeRule{table}, piece, out);
}
inline void bpe_encode_reference(const TokenTable& table, std::string_view piece,
                                 std::vector<int32_t>& out) {
  bpe_encode_reference(MergeRule{table}, piece, out);
}

}  // namespace difftx::data
