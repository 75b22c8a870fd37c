// Attention-allocation prompts from NIAH tasks: the measured row predicts the answer's first id,
// the answer span holds the queried needle's value and lies in the context, the context ends
// where the query block begins, depths are kept, every prompt passes check_prompt, and the
// prompts are those of evaluate_niah's seeds.
#include <gtest/gtest.h>

#include "core/rng.h"
#include "data/tasks/retrieval_fixture.h"
#include "eval/retrieval/niah_prompts.h"
#include "support/testing.h"

namespace difftx::retrieval {
namespace {

using testing::retrieval_data;
using eval::AllocationPrompt;

TEST(NiahPrompts, RowPredictsTheAnswerAndSpansAreTheTasks) {
  const auto& data = retrieval_data();
  const NiahGenerator generator(data.tokenizer, data.val);
  NiahPromptOptions o;
  o.context = 160;
  o.needles = 3;
  o.depths = {0, 0.5, 1};
  o.per_depth = 2;
  const std::vector<AllocationPrompt> prompts = niah_allocation_prompts(generator, o);
  ASSERT_EQ(prompts.size(), 6u);
  for (size_t i = 0; i < prompts.size(); ++i) {
    SCOPED_TRACE(i);
    const AllocationPrompt& p = prompts[i];
    const double depth = o.depths[i / 2];
    EXPECT_EQ(p.depth, depth);
    const NiahSample s =
        generator.sample(NiahSpec{o.context, o.needles, 1, depth, o.value_digits},
                         derive_rng(o.seed, {uint64_t(i % 2)}).next_u64());
    const NiahQuery& q = s.queries.front();
    EXPECT_EQ(p.query_position, q.answer.begin - 1);
    EXPECT_EQ(static_cast<int64_t>(p.tokens.size()), q.answer.begin);
    EXPECT_TRUE(std::equal(p.tokens.begin(), p.tokens.end(), s.tokens.begin()));
    ASSERT_EQ(p.answer.size(), 1u);
    const Span value = s.needles[q.needle].value_span;
    EXPECT_EQ(p.answer[0].begin, value.begin);
    EXPECT_EQ(p.answer[0].end, value.end);
    // The context is the haystack with every needle; the query block starts right after it.
    EXPECT_EQ(p.context.begin, 0);
    for (const NiahNeedle& n : s.needles) EXPECT_LE(n.needle.end, p.context.end);
    const std::vector<int32_t> intro = data.tokenizer.encode(kQueryIntro);
    ASSERT_FALSE(intro.empty());
    EXPECT_EQ(p.tokens[p.context.end], intro.front()) << "the query block begins after the context";
    EXPECT_NO_THROW(check_prompt(p, data.tokenizer.vocab_size(), o.context, "prompt"));
  }
}

TEST(NiahPrompts, BadOptionsAreClearErrors) {
  const auto& data = retrieval_data();
  const NiahGenerator generator(data.tokenizer, data.val);
  NiahPromptOptions o;
  o.depths = {};
  EXPECT_NE(difftx::testing::error_of([&] { niah_allocation_prompts(generator, o); }).find("no depths"),
            std::string::npos);
  o = {};
  o.per_depth = 0;
  EXPECT_NE(difftx::testing::error_of([&] { niah_allocation_prompts(generator, o); }).find("must be positive"),
            std::string::npos);
  o = {};
  o.depths = {1.5};
  EXPECT_NE(difftx::testing::error_of([&] { niah_allocation_prompts(generator, o); }).find("1.5"), std::string::npos);
}

}  // namespace
}  // namespace difftx::retrieval
