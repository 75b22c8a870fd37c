// Byte-pair encoding of one piece (one match of the split pattern), by tiktoken's rule: start
// from single bytes and repeatedly merge the adjacent pair whose concatenation is the token of
// lowest rank (the leftmost such pair on ties) until no adjacent pair forms a token. Appends the
// ranks of the final parts to out. Every single byte must be a token (TokenTable checked by the
// tokenizer loader).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "data/token_table.h"

namespace difftx::data {

// Picks the fast path by length.
void bpe_encode(const TokenTable& table, std::string_view piece, std::vector<int32_t>& out);

// The two fast paths, public so that tests can compare each with the reference twin.
// O(n^2): rescans an array of part boundaries; fastest for the short pieces of ordinary text.
void bpe_encode_scan(const TokenTable& table, std::string_view piece, std::vector<int32_t>& out);
// O(n log n): a priority queue over a linked list of parts; for long pieces (a run of 100 KB of
// letters would take minutes on the scan path).
void bpe_encode_heap(const TokenTable& table, std::string_view piece, std::vector<int32_t>& out);

// The reference twin: strings, concatenation and a full rescan per merge. Slow and obvious.
void bpe_encode_reference(const TokenTable& table, std::string_view piece,
                          std::vector<int32_t>& out);

}  // namespace difftx::data
