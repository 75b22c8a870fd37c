// Grading retrieval: the model forward's chosen rows are the full forward's; teacher-forced greedy
// matching agrees with real greedy decoding (KV cache) on a model and follows the sampler's tie
// rule; the NIAH grid counts exactly what a hand-built forward gets right; bad grids are clear
// errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "data/tasks/retrieval_fixture.h"
#include "eval/logits_forward.h"
#include "eval/retrieval/greedy_match.h"
#include "eval/retrieval/niah_eval.h"
#include "infer/generate.h"
#include "model/decoder.h"
#include "model/parameters.h"
#include "support/random_model.h"
#include "support/testing.h"

namespace difftx::retrieval {
namespace {

using difftx::testing::error_of;
using testing::retrieval_data;
using eval::LogitsForward;
using eval::model_forward;

model::ModelConfig small_config(int64_t vocab) {
  return difftx::testing::small_config(kernels::AttentionKind::diff2, {.vocab_size = vocab, .max_positions = 512});
}

TEST(LogitsForward, ModelRowsEqualTheFullForwardsRows) {
  model::Model model(small_config(96));
  model::init_parameters(model.config, model.table, model.host_weights(), 4);
  const int64_t T = 37, V = 96;
  std::vector<int32_t> tokens(T);
  Rng rng(2);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(V));
  std::vector<float> full(T * V);
  model::Activations acts(model.config, 1, T);
  model::decoder_logits(model, acts, tokens.data(), full.data());
  const std::vector<int64_t> rows = {36, 0, 17, 17, 5};
  std::vector<float> some(rows.size() * V);
  model_forward(model).run(tokens, rows, some.data());
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t v = 0; v < V; ++v)
      ASSERT_NEAR(some[i * V + v], full[rows[i] * V + v], 1e-5f) << "row " << rows[i] << " id " << v;
  EXPECT_NE(error_of([&] { model_forward(model).run(tokens, std::vector<int64_t>{T}, some.data()); })
                .find("row 37 is outside the 37 positions"),
            std::string::npos);
}

TEST(GreedyMatch, AgreesWithGreedyDecodingOfTheModel) {
  model::Model model(small_config(96));
  model::init_parameters(model.config, model.table, model.host_weights(), 3);
  const LogitsForward forward = model_forward(model);
  GreedyMatcher matcher(96);
  Rng rng(8);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<int32_t> tokens(20 + trial * 7);
    for (auto& t : tokens) t = static_cast<int32_t>(rng.below(96));
    const int64_t prompt = static_cast<int64_t>(tokens.size());
    infer::GenerateOptions o;
    o.sampling.temperature = 0;
    o.max_new_tokens = 4;
    o.sample_vocab = 96;
    infer::generate(model, tokens, o, [&](const infer::TokenEvent& e) {
      if (e.id >= 0) tokens.push_back(e.id);
    });
    ASSERT_EQ(static_cast<int64_t>(tokens.size()), prompt + 4);
    const std::vector<int64_t> rows = answer_rows({prompt, prompt + 4});
    EXPECT_EQ(rows, (std::vector<int64_t>{prompt - 1, prompt, prompt + 1, prompt + 2}));
    std::vector<float> logits(rows.size() * 96);
    forward.run(tokens, rows, logits.data());
    EXPECT_TRUE(matcher.reproduces(logits.data(), 96, std::span(tokens).subspan(prompt))) << "trial " << trial;
    for (int64_t p : {prompt, prompt + 3}) {  // any other answer id is not what greedy writes
      std::vector<int32_t> wrong = tokens;
      wrong[p] = (wrong[p] + 1) % 96;
      forward.run(wrong, rows, logits.data());
      EXPECT_FALSE(matcher.reproduces(logits.data(), 96, std::span(wrong).subspan(prompt)))
          << "trial " << trial << " position " << p;
    }
  }
}

TEST(GreedyMatch, NeedsEveryRowsGreedyChoiceAndTakesTheLowestIdAmongEquals) {
  const int64_t V = 5;
  std::vector<float> logits(2 * V, 0.0f);
  logits[0 * V + 2] = 1.0f;  // row 0 picks 2
  logits[1 * V + 3] = 1.0f;  // row 1 picks 3
  GreedyMatcher m(V);
  EXPECT_TRUE(m.reproduces(logits.data(), V, std::vector<int32_t>{2, 3}));
  EXPECT_FALSE(m.reproduces(logits.data(), V, std::vector<int32_t>{2, 4}));
  EXPECT_FALSE(m.reproduces(logits.data(), V, std::vector<int32_t>{1, 3}));
  logits[1 * V + 1] = 1.0f;  // a tie between ids 1 and 3: greedy takes 1
  EXPECT_FALSE(m.reproduces(logits.data(), V, std::vector<int32_t>{2, 3}));
  EXPECT_TRUE(m.reproduces(logits.data(), V, std::vector<int32_t>{2, 1}));
  GreedyMatcher narrow(3);  // ids past the tokenizer's vocabulary are never chosen
  logits[0 * V + 4] = 9.0f;
  EXPECT_TRUE(narrow.reproduces(logits.data(), V, std::vector<int32_t>{2, 1}));
  EXPECT_NE(error_of([] { answer_rows({0, 2}); }).find("answer span [0, 2)"), std::string::npos);
  logits[1 * V + 4] = std::nanf("");
  EXPECT_NE(error_of([&] { m.reproduces(logits.data(), V, std::vector<int32_t>{4, 1}); }).find("not finite"),
            std::string::npos);
}

// A forward that knows the sequence: row t puts logit 10 on tokens[t + 1], except that it
// misses (puts it on the next id) wherever `misses(next id)` holds. Only answers are asked for.
LogitsForward scripted_forward(int64_t V, std::function<bool(int32_t)> misses) {
  LogitsForward f;
  f.columns = V;
  f.max_tokens = 1024;
  f.run = [V, misses](std::span<const int32_t> tokens, std::span<const int64_t> rows, float* out) {
    std::fill(out, out + rows.size() * V, 0.0f);
    for (size_t i = 0; i < rows.size(); ++i) {
      const int32_t next = tokens[rows[i] + 1];
      out[i * V + (misses(next) ? (next + 1) % V : next)] = 10.0f;
    }
  };
  return f;
}

TEST(NiahEval, CountsExactlyWhatTheForwardGetsRight) {
  const auto& d = retrieval_data();
  const NiahGenerator gen(d.tokenizer, d.val);
  NiahGrid grid;
  grid.contexts = {160, 200};
  grid.needles = {1, 3};
  grid.queried = {1, 2};
  grid.depths = {0, 0.5, 1};
  grid.samples = 6;
  grid.seed = 5;
  const int64_t V = d.tokenizer.vocab_size();

  const NiahResult perfect = evaluate_niah(scripted_forward(V, [](int32_t) { return false; }), gen, grid);
  ASSERT_EQ(perfect.cells.size(), 2u * 3 * 3);  // (N, R) = (1,1), (3,1), (3,2)
  for (const NiahCell& c : perfect.cells) {
    EXPECT_EQ(c.samples, 6);
    EXPECT_EQ(c.asked, 6 * c.queried);
    EXPECT_EQ(c.retrieved, c.asked);
  }

  // Missing every digit token of odd id: a needle is retrieved iff its value has none. The
  // expected counts come from regenerating each cell's tasks.
  auto odd_digits = [&](int32_t id) {
    const std::string text = d.tokenizer.decode(std::vector<int32_t>{id});
    return id % 2 == 1 && !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  const NiahResult partial = evaluate_niah(scripted_forward(V, odd_digits), gen, grid);
  int64_t missed_somewhere = 0;
  for (const NiahCell& c : partial.cells) {
    int64_t expected = 0;
    for (int64_t i = 0; i < grid.samples; ++i) {
      const NiahSample s = gen.sample({c.context, c.needles, c.queried, c.depth, grid.value_digits},
                                      derive_rng(grid.seed, {uint64_t(i)}).next_u64());
      for (const NiahQuery& q : s.queries)
        expected += std::none_of(s.tokens.begin() + q.answer.begin, s.tokens.begin() + q.answer.end, odd_digits);
    }
    EXPECT_EQ(c.retrieved, expected) << "context " << c.context << " N " << c.needles << " R " << c.queried
                                     << " depth " << c.depth;
    missed_somewhere += c.asked - c.retrieved;
  }
  EXPECT_GT(missed_somewhere, 0) << "the test needs values with odd digit tokens";

  const nlohmann::json j = results::to_json(niah_results(partial));
  EXPECT_EQ(j["samples_per_cell"], 6);
  ASSERT_EQ(j["cells"].size(), partial.cells.size());
  for (size_t i = 0; i < partial.cells.size(); ++i) {
    const auto& c = j["cells"][i];
    EXPECT_EQ(c["context"], partial.cells[i].context);
    EXPECT_EQ(c["needles"], partial.cells[i].needles);
    EXPECT_EQ(c["queried"], partial.cells[i].queried);
    EXPECT_EQ(c["depth"], partial.cells[i].depth);
    EXPECT_EQ(c["samples"], 6);
    EXPECT_DOUBLE_EQ(c["accuracy"].get<double>(), partial.cells[i].accuracy());
  }
  const std::string table = niah_table(partial);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 1 + 2 * 3 + 1) << table;  // header, (context, N, R) rows, mean
}

TEST(NiahEval, BadGridsAreClearErrors) {
  const auto& d = retrieval_data();
  const NiahGenerator gen(d.tokenizer, d.val);
  LogitsForward f = scripted_forward(d.tokenizer.vocab_size(), [](int32_t) { return false; });
  f.max_tokens = 256;
  NiahGrid g;
  g.contexts = {512};
  EXPECT_NE(error_of([&] { evaluate_niah(f, gen, g); }).find("context 512 exceeds the model's max_position_embeddings 256"),
            std::string::npos);
  g.contexts = {256};
  g.needles = {1};
  g.queried = {2};
  EXPECT_NE(error_of([&] { evaluate_niah(f, gen, g); }).find("R must be <= N"), std::string::npos);
  g.queried = {1};
  g.samples = 0;
  EXPECT_NE(error_of([&] { evaluate_niah(f, gen, g); }).find("samples per cell 0"), std::string::npos);
  g.samples = 1;
  g.contexts = {8};
  EXPECT_NE(error_of([&] { evaluate_niah(f, gen, g); }).find("context 8 is too short"), std::string::npos);
  g.contexts = {};
  EXPECT_NE(error_of([&] { evaluate_niah(f, gen, g); }).find("at least one context"), std::string::npos);
}

}  // namespace
}  // namespace difftx::retrieval
