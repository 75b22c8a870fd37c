// Generation over ids: a fixed seed reproduces the tokens, another seed changes them, greedy
// follows the argmax of the decode logits, and the stop token and token budget end it.
#include <gtest/gtest.h>
#include "source_dir.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "infer/generate.h"
#include "support/engine_runs.h"
#include "model/model_io.h"

namespace difftx::infer {
namespace {

const std::filesystem::path kOracleFixtures = std::filesystem::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/oracle";

std::vector<int32_t> run(const model::Model& model, const GenerateOptions& o, GenerateResult* result = nullptr) {
  const std::vector<int32_t> prompt = {3, 14, 15, 9};
  std::vector<int32_t> out;
  const GenerateResult r = generate(model, prompt, o, [&](const TokenEvent& e) {
    if (e.id >= 0) out.push_back(e.id);
  });
  EXPECT_EQ(r.new_tokens, static_cast<int64_t>(out.size()));
  if (result) *result = r;
  return out;
}

TEST(Generate, TheSeedReproducesTheTokensForEveryVariant) {
  for (const char* name : {"baseline", "diff", "diff2"}) {
    const model::Model model = model::load_model_dir(kOracleFixtures / name);
    GenerateOptions o;
    o.sampling = {1.0, 0, 0.95, 42};
    o.max_new_tokens = 40;
    const auto a = run(model, o), b = run(model, o);
    EXPECT_EQ(a.size(), 40u) << name;
    EXPECT_EQ(a, b) << name;
    o.sampling.seed = 43;
    EXPECT_NE(run(model, o), a) << name;
  }
}

TEST(Generate, GreedyFollowsTheArgmaxOfTheDecodeLogits) {
  const model::Model model = model::load_model_dir(kOracleFixtures / "diff_gqa2");
  GenerateOptions o;
  o.sampling.temperature = 0;
  o.max_new_tokens = 20;
  const auto got = run(model, o);
  const std::vector<int32_t> prompt = {3, 14, 15, 9};
  const std::vector<float> logits = testing::engine_logits(model, prompt, got, o.kv);
  const int64_t V = model.config.vocab_size;
  for (size_t i = 0; i < got.size(); ++i) {
    const float* row = logits.data() + i * V;
    ASSERT_EQ(got[i], std::max_element(row, row + V) - row);
  }
}

TEST(Generate, StopsAtTheStopTokenTheBudgetOrAFullContext) {
  const model::Model model = model::load_model_dir(kOracleFixtures / "baseline");
  GenerateOptions o;
  o.sampling.temperature = 0;
  o.max_new_tokens = 30;
  const auto greedy = run(model, o);
  o.stop_tokens = {greedy[5]};  // the first time it is drawn, generation ends without passing it on
  GenerateResult r;
  const auto stopped = run(model, o, &r);
  EXPECT_TRUE(r.stopped_at_stop_token);
  const auto first = std::find(greedy.begin(), greedy.end(), greedy[5]) - greedy.begin();
  EXPECT_EQ(stopped, std::vector<int32_t>(greedy.begin(), greedy.begin() + first));
  o.stop_tokens.clear();
  o.context = 10;  // 4 prompt tokens: 6 decode steps fill the cache, the 7th token ends it
  const auto full = run(model, o, &r);
  EXPECT_TRUE(r.context_full);
  EXPECT_EQ(full, std::vector<int32_t>(greedy.begin(), greedy.begin() + 7));
  EXPECT_EQ(r.decode_steps, 6);
}

// A constraint whose third token fails (a grammar's limit reached mid-reply): the result says
// it ended in an error, with the constraint's message, not that the budget ran out.
TEST(Generate, AnEngineErrorIsTheResultsFinishWithItsMessage) {
  struct Failing : TokenConstraintSource {
    int64_t vocab = 0;
    int64_t vocab_size() const override { return vocab; }
    std::unique_ptr<TokenConstraint> start(std::span<const int32_t>) const override {
      struct Third : TokenConstraint {
        int taken = 0;
        const uint64_t* allowed() override { return nullptr; }
        void accept(int32_t) override {
          if (++taken == 3) throw std::runtime_error("the grammar needs too many states");
        }
        bool done() const override { return false; }
        std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<Third>(*this); }
      };
      return std::make_unique<Third>();
    }
  };
  const model::Model model = model::load_model_dir(kOracleFixtures / "baseline");
  auto source = std::make_shared<Failing>();
  source->vocab = model.config.vocab_size;
  GenerateOptions o;
  o.max_new_tokens = 30;
  o.constraint = source;
  GenerateResult r;
  run(model, o, &r);
  EXPECT_EQ(r.finish, FinishReason::error);
  EXPECT_EQ(r.error, "the grammar needs too many states");
  EXPECT_FALSE(r.stopped_at_stop_token);
  EXPECT_FALSE(r.context_full);
}

}  // namespace
}  // namespace difftx::infer
