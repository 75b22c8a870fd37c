// BPE vocabulary training: the incremental trainer against a from-scratch reference twin,
// determinism, the exact vocabulary size, and round trips through the trained tokenizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <omp.h>

#include <map>

#include "data/bpe_trainer.h"
#include "data/encodings.h"
#include "data/tokenizer_files.h"
#include "data_fixtures.h"

namespace difftx::data {
namespace {

using testing::random_text;

// Reference twin of train_bpe: recounts every pair of every piece before each merge.
std::vector<std::string> train_reference(std::span<const std::string_view> docs, int64_t vocab) {
  std::vector<std::pair<std::vector<int32_t>, int64_t>> words;
  for (const PieceCount& p : count_pieces(docs, default_training_pattern())) {
    std::vector<int32_t> ids;
    for (unsigned char c : p.piece) ids.push_back(c);
    words.push_back({ids, p.count});
  }
  std::vector<std::string> tokens;  // bytes by rank
  for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, static_cast<char>(b)));
  while (static_cast<int64_t>(tokens.size()) < vocab - 1) {
    std::map<std::pair<int32_t, int32_t>, int64_t> counts;
    for (const auto& [ids, n] : words)
      for (size_t i = 0; i + 1 < ids.size(); ++i) counts[{ids[i], ids[i + 1]}] += n;
    std::pair<int32_t, int32_t> best{-1, -1};
    int64_t best_n = 0;
    for (const auto& [pair, n] : counts)  // map order: ties go to the smaller pair
      if (n > best_n) best = pair, best_n = n;
    if (best_n < 2) break;
    const std::string bytes = tokens[best.first] + tokens[best.second];
    auto existing = std::find(tokens.begin(), tokens.end(), bytes);
    int32_t merged = static_cast<int32_t>(existing - tokens.begin());
    if (existing == tokens.end()) tokens.push_back(bytes);
    for (auto& [ids, n] : words) {
      std::vector<int32_t> out;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (i + 1 < ids.size() && ids[i] == best.first && ids[i + 1] == best.second) {
          out.push_back(merged);
          ++i;
        } else {
          out.push_back(ids[i]);
        }
      }
      ids = out;
    }
  }
  return tokens;
}

std::vector<std::string> corpus(uint64_t seed, int docs, size_t bytes) {
  Rng rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < docs; ++i) out.push_back(random_text(rng, bytes));
  return out;
}

TEST(BpeTrainer, MatchesReferenceTwin) {
  const auto docs = corpus(21, 30, 1500);
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  const int64_t vocab = 600;
  const Tokenizer tok = train_bpe(views, {.vocab_size = vocab});
  const auto want = train_reference(views, vocab);
  ASSERT_EQ(tok.ranks().rank_end(), static_cast<int32_t>(want.size()));
  for (size_t r = 0; r < want.size(); ++r)
    ASSERT_EQ(tok.ranks().bytes_of(static_cast<int32_t>(r)), want[r]) << "rank " << r;
}

TEST(BpeTrainer, HitsTheRequestedSizeWithEndOfTextLast) {
  const auto docs = corpus(4, 20, 3000);
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  const Tokenizer tok = train_bpe(views, {.vocab_size = 512});
  EXPECT_EQ(tok.vocab_size(), 512);
  EXPECT_EQ(tok.end_of_text(), 511);
  EXPECT_EQ(tok.decode(std::vector<int32_t>{511}), "<|endoftext|>");
  for (int b = 0; b < 256; ++b) EXPECT_EQ(tok.ranks().bytes_of(b), std::string(1, char(b)));
}

TEST(BpeTrainer, IsDeterministicAndIndependentOfDocumentOrderAndThreads) {
  const auto docs = corpus(8, 25, 2000);
  std::vector<std::string_view> views(docs.begin(), docs.end());
  const std::string first = tiktoken_file_text(train_bpe(views, {.vocab_size = 800}).ranks());
  std::reverse(views.begin(), views.end());
  EXPECT_EQ(tiktoken_file_text(train_bpe(views, {.vocab_size = 800}).ranks()), first);
  omp_set_num_threads(1);
  EXPECT_EQ(tiktoken_file_text(train_bpe(views, {.vocab_size = 800}).ranks()), first);
  omp_set_num_threads(omp_get_num_procs());
}

TEST(BpeTrainer, LearnsFrequentWordsAndRoundTripsUnseenText) {
  std::vector<std::string> docs;
  for (int i = 0; i < 50; ++i) docs.push_back("the whale and the sea, the whale and the ship. ");
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  const Tokenizer tok = train_bpe(views, {.vocab_size = 300});
  EXPECT_EQ(tok.encode(" whale").size(), 1u) << "a piece seen 100 times should be one token";
  Rng rng(2);
  for (int i = 0; i < 20; ++i) {
    const std::string text = random_text(rng, 500);
    EXPECT_EQ(tok.decode(tok.encode(text)), text);
  }
}

TEST(BpeTrainer, StopsEarlyWhenNothingRepeats) {
  const std::vector<std::string_view> views = {"ab cd"};
  const Tokenizer tok = train_bpe(views, {.vocab_size = 1000});
  EXPECT_EQ(tok.vocab_size(), 257);  // no pair occurs twice: bytes and end-of-text only
}

TEST(BpeTrainer, RejectsBadOptionsAndInvalidUtf8) {
  const std::vector<std::string_view> ok = {"text"};
  EXPECT_THROW(train_bpe(ok, {.vocab_size = 100}), Error);
  const std::vector<std::string_view> bad = {"fine", std::string_view("bad \xff byte", 10)};
  try {
    train_bpe(bad, {.vocab_size = 300});
    FAIL() << "invalid UTF-8 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("document 1: invalid UTF-8 at byte offset 4"),
              std::string::npos)
        << e.what();
  }
}

// The pieces are counted in an OpenMP region: a split error there (documents the pattern does
// not cover) comes out of count_pieces as the first failing document's Error, never a terminate.
TEST(BpeTrainer, SplitErrorsInsideTheParallelCountAreErrors) {
  std::vector<std::string> docs(256, "aaaa");
  docs[97] = "aa b";   // offset 2 cannot start a piece of "a+"
  docs[200] = "b";     // offset 0: a later document, not the one reported
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  for (int repeat = 0; repeat < 5; ++repeat) {
    try {
      count_pieces(views, "a+");
      FAIL() << "an uncovered character was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("matches nothing at byte offset 2"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(train_bpe(views, {.vocab_size = 300, .pattern = "a+"}), Error);
}

}  // namespace
}  // namespace difftx::data
