// Learning a byte-level BPE vocabulary from text, written in the same tiktoken model the
// pretrained encodings use (tokenizer.h): ranks 0..255 are the single bytes in byte order,
// rank 256 + k is the k-th merge, and <|endoftext|> takes the id after the last rank.
//
// Why tiktoken's format rather than SentencePiece: one loader, one encoder and one set of
// tests (the gpt-tokenizer vectors) serve pretrained and trained vocabularies alike; byte-level
// BPE has no unknown token, so any UTF-8 round-trips exactly; the split pattern keeps words,
// numbers and whitespace apart as in cl100k_base; and nothing new has to be installed.
//
// Algorithm (Sennrich et al. 2016, on byte sequences as in GPT-2): cut every document into
// pieces with the split pattern and count the distinct pieces; then repeatedly merge the most
// frequent adjacent pair of tokens across all pieces, weighted by piece count. Ties go to the
// pair with the smaller (left id, right id). Pair counts are updated incrementally for just
// the pieces that contain the merged pair. The result depends only on the multiset of pieces:
// not on document order, not on the thread count.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/interrupt.h"
#include "data/tokenizer.h"

namespace difftx::data {

struct BpeTrainingOptions {
  int64_t vocab_size = 8192;  // total, special tokens included; at least 257
  std::string pattern{};      // empty: default_training_pattern()
  std::string name{};         // empty: "bpe-<vocab_size>"
  // Called now and then with (merges done, merges wanted).
  std::function<void(int64_t, int64_t)> progress{};
  Interrupt interrupt{};  // called after every merge (core/interrupt.h)
};

// Stops early, with a smaller vocabulary, when no pair occurs at least twice. Documents must
// be valid UTF-8 (an error names the document index otherwise).
Tokenizer train_bpe(std::span<const std::string_view> documents,
                    const BpeTrainingOptions& options);

// The distinct pieces of the documents under a split pattern, with their counts, sorted by
// bytes. The first stage of train_bpe, public for its reference twin in the tests.
struct PieceCount {
  std::string_view piece;
  int64_t count;
};
std::vector<PieceCount> count_pieces(std::span<const std::string_view> documents,
                                     const std::string& pattern);

}  // namespace difftx::data
