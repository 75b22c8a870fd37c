// BPE merging: both fast paths against the reference twin, on a trained vocabulary (where most
// pieces need many merges) and on GPT-2's, for short pieces and very long ones.
#include <gtest/gtest.h>

#include "data/bpe.h"
#include "data/bpe_trainer.h"
#include "data/tokenizer_files.h"
#include "data_fixtures.h"

namespace difftx::data {
namespace {

using testing::random_text;

// A small vocabulary trained on random text, so that merges of every kind exist.
const Tokenizer& small_trained() {
  static const Tokenizer tok = [] {
    Rng rng(11);
    std::vector<std::string> docs;
    for (int i = 0; i < 40; ++i) docs.push_back(random_text(rng, 2000));
    std::vector<std::string_view> views(docs.begin(), docs.end());
    return train_bpe(views, {.vocab_size = 700});
  }();
  return tok;
}

void expect_paths_agree(const TokenTable& table, std::string_view piece) {
  std::vector<int32_t> want, scan, heap, dispatch;
  bpe_encode_reference(table, piece, want);
  bpe_encode_scan(table, piece, scan);
  bpe_encode_heap(table, piece, heap);
  bpe_encode(table, piece, dispatch);
  ASSERT_EQ(scan, want) << "scan path, piece of " << piece.size() << " bytes";
  ASSERT_EQ(heap, want) << "heap path, piece of " << piece.size() << " bytes";
  ASSERT_EQ(dispatch, want);
}

TEST(Bpe, FastPathsMatchReferenceOnRandomPieces) {
  const TokenTable& table = small_trained().ranks();
  Rng rng(5);
  for (int trial = 0; trial < 400; ++trial) {
    const std::string text = random_text(rng, 1 + rng.below(60));
    expect_paths_agree(table, text);  // whole random strings: many merges, awkward boundaries
  }
}

TEST(Bpe, FastPathsMatchReferenceOnRepeatsAndTies) {
  // Runs of one byte make equal-rank pairs everywhere: the leftmost must win each time.
  const TokenTable& table = small_trained().ranks();
  for (std::string piece : {"aaaaaaa", "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", "ththththth", "  \n\n  \n"})
    expect_paths_agree(table, piece);
  for (size_t n = 1; n <= 70; ++n) expect_paths_agree(table, std::string(n, 'e'));
}

TEST(Bpe, FastPathsMatchReferenceOnGpt2Vocabulary) {
  DIFFTX_REQUIRE_DATA("tokenizers/r50k_base.tiktoken");
  const Tokenizer tok = load_tokenizer("r50k_base");
  Rng rng(9);
  for (int trial = 0; trial < 200; ++trial)
    expect_paths_agree(tok.ranks(), random_text(rng, 1 + rng.below(40)));
  expect_paths_agree(tok.ranks(), "antidisestablishmentarianism");
}

TEST(Bpe, LongPieceTakesHeapPathAndStaysExact) {
  const TokenTable& table = small_trained().ranks();
  Rng rng(3);
  std::string letters;
  while (letters.size() < 1500) letters += "whaleIshmaelthe"[rng.below(15)];
  expect_paths_agree(table, letters);  // 1500 bytes: the reference is slow but still fine
  // 200 KB of one letter: the heap path must finish quickly (the scan path is quadratic).
  std::vector<int32_t> ids;
  bpe_encode(table, std::string(200000, 'e'), ids);
  std::string back;
  for (int32_t id : ids) back += table.bytes_of(id);
  EXPECT_EQ(back, std::string(200000, 'e'));
}

TEST(TokenTable, FindsEveryTokenBothWaysAndRejectsDuplicates) {
  TokenTable t;
  Rng rng(1);
  std::vector<std::string> tokens;
  for (int i = 0; i < 5000; ++i) {  // enough to force several rehashes
    std::string s = std::to_string(i) + random_text(rng, rng.below(12));
    if (t.insert(s, i)) tokens.push_back(s);
    else tokens.push_back("");
  }
  for (int i = 0; i < 5000; ++i) {
    if (tokens[i].empty()) continue;
    EXPECT_EQ(t.find(tokens[i]), i);
    EXPECT_EQ(t.bytes_of(i), tokens[i]);
  }
  EXPECT_EQ(t.find("not a token at all"), -1);
  ASSERT_FALSE(tokens[0].empty());
  EXPECT_FALSE(t.insert(tokens[0], 99999));  // same bytes as rank 0
  EXPECT_FALSE(t.insert("fresh", 0));        // same rank as tokens[0]
  EXPECT_FALSE(t.insert("", 123456));      // empty bytes are never a token
  EXPECT_FALSE(t.has_rank(123456));
}

}  // namespace
}  // namespace difftx::data
