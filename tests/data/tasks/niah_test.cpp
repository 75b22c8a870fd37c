// The needle-in-a-haystack generator: the same seed gives the same task; the sequence is exactly
// the context; every needle reads "The magic number for KEY is VALUE." at the spans it reports;
// the queried needles sit at the asked depth; the answers copy the needles' values; the text
// around the needles is an exact slice of the requested split; bad specs are clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/tasks/niah.h"
#include "data/tasks/retrieval_fixture.h"
#include "support/testing.h"

namespace difftx::retrieval {
namespace {

using difftx::testing::error_of;
using testing::retrieval_data;

std::vector<int32_t> slice(const std::vector<int32_t>& t, Span s) {
  return std::vector<int32_t>(t.begin() + s.begin, t.begin() + s.end);
}

// Checks everything a sample promises about itself, the haystack against `split`.
void expect_well_formed(const NiahSample& s, const NiahSpec& spec, const data::Tokenizer& tok,
                        const data::SplitReader& split) {
  ASSERT_EQ(static_cast<int64_t>(s.tokens.size()), spec.context);
  ASSERT_EQ(static_cast<int64_t>(s.needles.size()), spec.needles);
  ASSERT_EQ(static_cast<int64_t>(s.queries.size()), spec.queried);
  std::set<std::string> keys, values;
  int64_t queried = 0, previous_end = 0;
  std::vector<int32_t> haystack;
  for (const NiahNeedle& n : s.needles) {
    keys.insert(n.key);
    values.insert(n.value);
    queried += n.queried;
    // The text of the needle, and its value span inside it.
    EXPECT_EQ(tok.decode(slice(s.tokens, n.needle)), " The magic number for " + n.key + " is " + n.value + ".");
    EXPECT_EQ(slice(s.tokens, n.value_span), tok.encode(n.value));
    EXPECT_TRUE(n.needle.begin <= n.value_span.begin && n.value_span.end <= n.needle.end);
    EXPECT_EQ(static_cast<int>(n.value.size()), spec.value_digits);
    EXPECT_NE(n.value[0], '0');
    // Needles in sequence order, the haystack tokens between them.
    ASSERT_GE(n.needle.begin, previous_end);
    haystack.insert(haystack.end(), s.tokens.begin() + previous_end, s.tokens.begin() + n.needle.begin);
    EXPECT_EQ(static_cast<int64_t>(haystack.size()), n.haystack_offset) << "needle " << n.key;
    previous_end = n.needle.end;
    if (n.queried) {
      EXPECT_EQ(n.haystack_offset, std::llround(spec.depth * s.haystack_tokens));
    }
  }
  EXPECT_EQ(static_cast<int64_t>(keys.size()), spec.needles) << "keys must be distinct";
  EXPECT_EQ(static_cast<int64_t>(values.size()), spec.needles) << "values must be distinct";
  EXPECT_EQ(queried, spec.queried);

  // After the last needle: the rest of the haystack, then the query block.
  std::vector<int32_t> block = tok.encode("\n");
  std::set<int64_t> asked;
  for (const NiahQuery& q : s.queries) {
    ASSERT_TRUE(q.needle >= 0 && q.needle < spec.needles);
    const NiahNeedle& n = s.needles[q.needle];
    EXPECT_TRUE(n.queried);
    asked.insert(q.needle);
    EXPECT_EQ(slice(s.tokens, q.answer), slice(s.tokens, n.value_span)) << "the answer must copy the needle's value";
    const std::vector<int32_t> lead = tok.encode(" The magic number for " + n.key + " is ");
    block.insert(block.end(), lead.begin(), lead.end());
    const auto value = slice(s.tokens, n.value_span);
    block.insert(block.end(), value.begin(), value.end());
    const auto dot = tok.encode(".");
    block.insert(block.end(), dot.begin(), dot.end());
  }
  EXPECT_EQ(static_cast<int64_t>(asked.size()), spec.queried) << "each queried needle is asked once";
  const int64_t block_begin = spec.context - static_cast<int64_t>(block.size());
  EXPECT_EQ(std::vector<int32_t>(s.tokens.begin() + block_begin, s.tokens.end()), block);
  EXPECT_EQ(s.prompt_length(), s.queries.front().answer.begin);
  haystack.insert(haystack.end(), s.tokens.begin() + previous_end, s.tokens.begin() + block_begin);
  ASSERT_EQ(static_cast<int64_t>(haystack.size()), s.haystack_tokens);

  std::vector<int32_t> expected(s.haystack_tokens);
  split.copy(s.haystack_start, s.haystack_tokens, expected.data());
  EXPECT_EQ(haystack, expected) << "the haystack must be a slice of split '" << split.split() << "'";
}

TEST(Niah, SameSeedSameTaskOtherSeedAnother) {
  const auto& d = retrieval_data();
  const NiahGenerator gen(d.tokenizer, d.val);
  const NiahSpec spec{200, 4, 2, 0.25, 3};
  const NiahSample a = gen.sample(spec, 11), b = gen.sample(spec, 11), c = gen.sample(spec, 12);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.haystack_start, b.haystack_start);
  ASSERT_EQ(a.queries.size(), b.queries.size());
  for (size_t i = 0; i < a.queries.size(); ++i) EXPECT_EQ(a.queries[i].answer.begin, b.queries[i].answer.begin);
  EXPECT_NE(a.tokens, c.tokens);
}

TEST(Niah, EveryShapeIsWellFormed) {
  const auto& d = retrieval_data();
  int64_t checked = 0;
  for (const data::SplitReader* split : {&d.val, &d.train}) {
    const NiahGenerator gen(d.tokenizer, *split);
    for (int64_t context : {90, 257})
      for (auto [n, r] : {std::pair{1, 1}, {2, 2}, {4, 2}, {6, 3}})
        for (double depth : {0.0, 0.25, 0.5, 0.75, 1.0})
          for (int digits : {1, 3}) {
            const NiahSpec spec{context, n, r, depth, digits};
            if (gen.max_task_tokens(n, r, digits) >= context) continue;
            SCOPED_TRACE(::testing::Message() << split->split() << " context " << context << " N " << n << " R " << r
                                            << " depth " << depth << " digits " << digits);
            for (uint64_t seed : {1, 2, 3}) expect_well_formed(gen.sample(spec, seed), spec, d.tokenizer, *split);
            ++checked;
          }
  }
  EXPECT_GE(checked, 2 * 60) << "most shapes must fit the contexts";
}

TEST(Niah, DepthZeroAndOnePutTheNeedleAtTheEdgesOfTheHaystack) {
  const auto& d = retrieval_data();
  const NiahGenerator gen(d.tokenizer, d.val);
  const NiahSample first = gen.sample({128, 1, 1, 0.0, 3}, 4);
  EXPECT_EQ(first.needles[0].needle.begin, 0);
  // At depth 1 the query block follows the needle: "\n", then the same lead, then the answer.
  const NiahSample last = gen.sample({128, 1, 1, 1.0, 3}, 4);
  const NiahNeedle& n = last.needles[0];
  const int64_t intro = static_cast<int64_t>(d.tokenizer.encode("\n").size());
  const int64_t lead = n.value_span.begin - n.needle.begin;
  EXPECT_EQ(n.needle.end + intro + lead, last.queries[0].answer.begin);
}

TEST(Niah, BadSpecsAreClearErrors) {
  const auto& d = retrieval_data();
  const NiahGenerator gen(d.tokenizer, d.val);
  auto err = [&](NiahSpec s) { return error_of([&] { gen.sample(s, 1); }); };
  EXPECT_NE(err({256, 2, 3, 0.5, 3}).find("queried R = 3 must be in [1, N = 2]"), std::string::npos);
  EXPECT_NE(err({256, 0, 1, 0.5, 3}).find("needles N = 0"), std::string::npos);
  EXPECT_NE(err({4096, 49, 1, 0.5, 3}).find("needles N = 49 must be in [1, 48]"), std::string::npos);
  EXPECT_NE(err({256, 1, 1, 1.5, 3}).find("depth 1.5 must be in [0, 1]"), std::string::npos);
  EXPECT_NE(err({256, 1, 1, 0.5, 0}).find("value digits 0"), std::string::npos);
  EXPECT_NE(err({256, 10, 1, 0.5, 1}).find("only 9 distinct values"), std::string::npos);
  const int64_t task = gen.max_task_tokens(2, 1, 3);  // the context must leave a haystack token
  const std::string short_context = err({task, 2, 1, 0.5, 3});
  EXPECT_NE(short_context.find("context " + std::to_string(task) + " is too short for N = 2 needles and R = 1 queries"),
            std::string::npos)
      << short_context;
  EXPECT_NO_THROW(gen.sample({task + 1, 2, 1, 0.5, 3}, 1));
  const std::string long_context = err({static_cast<int64_t>(d.val.tokens()) + 200, 1, 1, 0.5, 3});
  EXPECT_NE(long_context.find("split 'val'"), std::string::npos) << long_context;
  EXPECT_NE(long_context.find("fewer than the haystack"), std::string::npos) << long_context;
}

}  // namespace
}  // namespace difftx::retrieval
