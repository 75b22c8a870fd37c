// Attention allocation (eval/attention_allocation.h): sums over hand-built rows, the prompt
// checks, and on small models of every variant that every measured row is a normalised row of
// the query position (answer + noise + the keys outside the context = 1) and that the summary
// means are means of the per-prompt figures.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "eval/attention_allocation.h"
#include "support/random_model.h"
#include "support/testing.h"

namespace difftx::eval {
namespace {

AllocationPrompt prompt_of(int64_t length, TokenSpan context, std::vector<TokenSpan> answer, double depth = 0.5) {
  AllocationPrompt p;
  for (int64_t i = 0; i < length; ++i) p.tokens.push_back(static_cast<int32_t>(i % 7));
  p.query_position = length - 1;
  p.context = context;
  p.answer = std::move(answer);
  p.depth = depth;
  return p;
}

TEST(AttentionAllocation, SumsAHandBuiltRow) {
  const double row[] = {0.1, 0.2, 0.3, -0.05, 0.25, 0.2};
  // Context [0, 4): answer [1, 3), noise = 0.1 - 0.05; keys 4 and 5 (the question) count as neither.
  const Allocation a = allocate(row, 6, prompt_of(6, {0, 4}, {{1, 3}}));
  EXPECT_NEAR(a.answer, 0.5, 1e-15);
  EXPECT_NEAR(a.noise, 0.05, 1e-15);
  EXPECT_NEAR(a.noise_abs, 0.15, 1e-15);
  // Overlapping answer spans count each key once.
  const Allocation b = allocate(row, 6, prompt_of(6, {0, 6}, {{0, 2}, {1, 3}}));
  EXPECT_NEAR(b.answer, 0.6, 1e-15);
  EXPECT_NEAR(b.noise, 0.4, 1e-15);
  EXPECT_NEAR(b.noise_abs, 0.5, 1e-15);
  EXPECT_NE(testing::error_of([&] { allocate(row, 3, prompt_of(6, {0, 4}, {{1, 3}})); }).find("reaches past the row's 3 keys"),
            std::string::npos);
}

TEST(AttentionAllocation, BadPromptsGetClearErrors) {
  auto error = [](const AllocationPrompt& p) { return testing::error_of([&] { check_prompt(p, 7, 16, "prompt 3"); }); };
  EXPECT_EQ(error(prompt_of(8, {0, 6}, {{2, 4}})), "(no error)");
  EXPECT_NE(error(prompt_of(0, {0, 0}, {{0, 1}})).find("prompt 3: the prompt has no tokens"), std::string::npos);
  EXPECT_NE(error(prompt_of(17, {0, 6}, {{2, 4}})).find("17 tokens exceed the model's max_position_embeddings 16"),
            std::string::npos);
  AllocationPrompt id = prompt_of(8, {0, 6}, {{2, 4}});
  id.tokens[5] = 7;
  EXPECT_NE(error(id).find("token id 7 at position 5 is outside the vocabulary [0, 7)"), std::string::npos);
  AllocationPrompt query = prompt_of(8, {0, 6}, {{2, 4}});
  query.query_position = 8;
  EXPECT_NE(error(query).find("query position 8 is outside the prompt [0, 8)"), std::string::npos);
  EXPECT_NE(error(prompt_of(8, {0, 9}, {{2, 4}})).find("context span [0, 9) is not inside"), std::string::npos);
  EXPECT_NE(error(prompt_of(8, {0, 6}, {{5, 7}})).find("answer span [5, 7) is empty or not inside the context span [0, 6)"),
            std::string::npos);
  EXPECT_NE(error(prompt_of(8, {0, 6}, {{3, 3}})).find("answer span [3, 3) is empty"), std::string::npos);
  EXPECT_NE(error(prompt_of(8, {0, 6}, {})).find("no answer span"), std::string::npos);
  EXPECT_NE(error(prompt_of(8, {0, 6}, {{2, 4}}, 1.5)).find("depth 1.5 is not in [0, 1]"), std::string::npos);
}

TEST(AttentionAllocation, RowsOfEveryVariantAreNormalisedAndSummariesAreMeans) {
  for (kernels::AttentionKind attention :
       {kernels::AttentionKind::baseline, kernels::AttentionKind::diff, kernels::AttentionKind::diff2}) {
    SCOPED_TRACE(kernels::attention_kind_name(attention));
    const model::ModelConfig c =
        testing::small_config(attention, {.vocab_size = 7, .layers = 3, .intermediate_size = 48});
    const model::Model model = testing::random_model(c, 3, 5.0f);  // sharper maps than at init

    // Two depths, two prompts at the first; a question of 3 tokens after the context.
    std::vector<AllocationPrompt> prompts = {prompt_of(20, {0, 17}, {{2, 4}}, 0.1), prompt_of(20, {0, 17}, {{3, 5}}, 0.1),
                                             prompt_of(12, {0, 9}, {{7, 8}}, 0.9)};
    Rng rng(8);
    for (auto& p : prompts)
      for (auto& t : p.tokens) t = static_cast<int32_t>(rng.below(7));
    prompts[1].query_position = 15;  // a query inside the prompt, not its last token
    prompts[1].context = {0, 14};
    std::vector<PromptRows> rows;
    for (const auto& p : prompts) rows.push_back(prompt_rows(model, p));

    std::vector<Allocation> per_prompt;
    for (size_t p = 0; p < prompts.size(); ++p) {
      ASSERT_EQ(rows[p].keys, prompts[p].query_position + 1);
      Allocation mean;
      for (int64_t l = 0; l < c.num_hidden_layers; ++l)
        for (int64_t h = 0; h < c.num_attention_heads; ++h) {
          const double* w = rows[p].row(l, h);
          double outside = 0, total = 0;
          for (int64_t s = 0; s < rows[p].keys; ++s) {
            total += w[s];
            if (s >= prompts[p].context.end) outside += w[s];
          }
          EXPECT_NEAR(total, 1.0, 1e-9);
          const Allocation a = allocate(w, rows[p].keys, prompts[p]);
          EXPECT_NEAR(a.answer + a.noise + outside, 1.0, 1e-9);
          EXPECT_GE(a.noise_abs, std::fabs(a.noise) - 1e-12);
          mean.answer += a.answer / 6;
          mean.noise += a.noise / 6;
        }
      per_prompt.push_back(mean);
    }
    const AllocationSummary s = summarise_allocation(prompts, rows);
    EXPECT_EQ(s.rows, 3 * 6);
    EXPECT_EQ(s.skipped_rows, 0);
    ASSERT_EQ(s.depths, (std::vector<double>{0.1, 0.9}));
    EXPECT_NEAR(s.by_depth[0].answer, (per_prompt[0].answer + per_prompt[1].answer) / 2, 1e-12);
    EXPECT_NEAR(s.by_depth[1].noise, per_prompt[2].noise, 1e-12);
    EXPECT_NEAR(s.mean.answer, (per_prompt[0].answer + per_prompt[1].answer + per_prompt[2].answer) / 3, 1e-12);
    ASSERT_EQ(s.by_layer.size(), 3u);
    ASSERT_EQ(s.by_head[2].size(), 2u);
    double layer_mean = 0;
    for (const Allocation& a : s.by_layer) layer_mean += a.answer / 3;
    EXPECT_NEAR(layer_mean, s.mean.answer, 1e-12);

    // Figure rows: one head as measured; the mean over everything sums to 1.
    const std::vector<double> one = figure_row(rows[2], 1, 0), all = figure_row(rows[2], -1, -1);
    EXPECT_EQ(one, std::vector<double>(rows[2].row(1, 0), rows[2].row(1, 0) + rows[2].keys));
    double sum = 0;
    for (double x : all) sum += x;
    EXPECT_NEAR(sum, 1.0, 1e-9);
    EXPECT_NE(testing::error_of([&] { figure_row(rows[2], 3, 0); }).find("layer 3 outside [0, 3)"), std::string::npos);

    // The whole analysis: the same summary, and the figure of the prompt nearest depth 0.5
    // (depths 0.1 and 0.9 tie: the first).
    const AttentionAnalysis analysis = analyse_attention(model, prompts, 2, -1);
    EXPECT_EQ(analysis.summary.mean.answer, s.mean.answer);
    EXPECT_EQ(analysis.summary.by_layer[1].noise, s.by_layer[1].noise);
    EXPECT_EQ(analysis.figure_prompt, 0u);
    EXPECT_EQ(analysis.figure_weights, figure_row(rows[0], 2, -1));
    int calls = 0;  // the interrupt runs after every prompt
    analyse_attention(model, prompts, 2, -1, [&] { ++calls; });
    EXPECT_EQ(calls, 3);
  }
}

// A row without a normalised form (diff lambda = 1: it sums to 0) is left out of the means and
// counted, instead of turning every mean into NaN.
TEST(AttentionAllocation, RowsWithoutANormalisedFormAreLeftOutAndCounted) {
  const nlohmann::json j = {{"model_type", "difftx"}, {"attention", "diff"}, {"vocab_size", 7},
                            {"hidden_size", 32},      {"num_hidden_layers", 2}, {"num_attention_heads", 2},
                            {"num_key_value_heads", 1}, {"head_dim", 8},        {"intermediate_size", 48},
                            {"lambda_init", 0.5}};
  const model::ModelConfig c = model::config_from_json(j, "test");
  model::Model model(c);
  model::init_parameters(c, model.table, model.host_weights(), 3);
  // Layer 1 at lambda = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init = 1.5 - 1 + 0.5 = 1 (Eq. 2).
  model::LayerTensors& w = model.tensors.layers[1];
  for (int64_t i = 0; i < c.head_dim; ++i)
    w.lambda_q1.host()[i] = w.lambda_k1.host()[i] = w.lambda_q2.host()[i] = w.lambda_k2.host()[i] = 0.0f;
  w.lambda_q1.host()[0] = static_cast<float>(std::log(1.5));
  w.lambda_k1.host()[0] = 1.0f;
  const AllocationPrompt p = prompt_of(10, {0, 8}, {{2, 3}});
  const PromptRows rows = prompt_rows(model, p);
  EXPECT_TRUE(std::isnan(rows.row(1, 0)[0]));
  EXPECT_FALSE(std::isnan(rows.row(0, 0)[0]));
  const AllocationSummary s = summarise_allocation({p}, {rows});
  EXPECT_EQ(s.rows, 4);
  EXPECT_EQ(s.skipped_rows, 2);
  EXPECT_FALSE(std::isnan(s.mean.answer));
  EXPECT_NEAR(s.mean.answer, (allocate(rows.row(0, 0), 10, p).answer + allocate(rows.row(0, 1), 10, p).answer) / 2, 1e-12);
  EXPECT_TRUE(std::isnan(s.by_layer[1].answer));
  EXPECT_FALSE(std::isnan(figure_row(rows, -1, -1)[0]));
}

}  // namespace
}  // namespace difftx::eval
