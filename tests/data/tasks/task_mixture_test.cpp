// The training mixture: --mix parsing; each batch holds its fractions of task rows to within a
// row or two; rows are a pure function of (seed, step, row), so a batch split into micro-batches
// (or ranks) gets the same rows and a resumed run the same data; NIAH and MQAR rows count only
// the answers, each a copy of what followed the same context earlier in the row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "data/tasks/retrieval_fixture.h"
#include "data/tasks/task_mixture.h"
#include "model/decoder.h"
#include "support/testing.h"

namespace difftx::retrieval {
namespace {

using difftx::testing::error_of;
using testing::retrieval_data;

TEST(MixtureSpec, ParsesAndRejectsClearly) {
  const auto parse = [](std::string_view text) { return parse_mixture(text, OptionSpelling::flag); };
  const MixtureSpec both = parse("niah=0.2,mqar=0.1");
  EXPECT_DOUBLE_EQ(both.niah, 0.2);
  EXPECT_DOUBLE_EQ(both.mqar, 0.1);
  EXPECT_TRUE(parse("").empty());
  EXPECT_DOUBLE_EQ(parse("mqar=1").mqar, 1.0);
  EXPECT_EQ(mixture_to_json(both), (nlohmann::json{{"niah", 0.2}, {"mqar", 0.1}}));
  EXPECT_EQ(mixture_to_json({}), nlohmann::json::object());
  EXPECT_NE(error_of([&] { parse("needle=0.2"); }).find("--mix: unknown task 'needle'"), std::string::npos);
  EXPECT_NE(error_of([&] { parse("niah=0.2,niah=0.1"); }).find("niah is given twice"), std::string::npos);
  EXPECT_NE(error_of([&] { parse("niah=1.5"); }).find("'niah=1.5': the fraction must be a number in [0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse("niah=x"); }).find("must be a number"), std::string::npos);
  EXPECT_NE(error_of([&] { parse("niah"); }).find("is not TASK=FRACTION"), std::string::npos);
  EXPECT_NE(error_of([&] { parse("niah=0.7,mqar=0.6"); }).find("sum to 1.3"), std::string::npos);
  // The library's callers (C API, Python) wrote the field, not the flag.
  const std::string field = error_of([] { parse_mixture("needle=0.2", OptionSpelling::field); });
  EXPECT_EQ(field.rfind("mix: unknown task", 0), 0u) << field;
}

TEST(TaskMixture, EveryBatchHoldsItsFractions) {
  const TaskMixture mix({0.2, 0.1}, retrieval_data().dir, 128, 7, OptionSpelling::flag);
  for (int64_t rows : {8, 32}) {
    int64_t niah = 0, mqar = 0;
    const int64_t steps = 2000;
    for (int64_t step = 0; step < steps; ++step) {
      int64_t n = 0, m = 0;
      for (int64_t row = 0; row < rows; ++row) {
        const RowKind k = mix.kind(step, row);
        n += k == RowKind::niah;
        m += k == RowKind::mqar;
      }
      EXPECT_LE(std::abs(n - 0.2 * rows), 2.0) << "step " << step << " rows " << rows;
      EXPECT_LE(std::abs(m - 0.1 * rows), 2.0) << "step " << step << " rows " << rows;
      niah += n;
      mqar += m;
    }
    EXPECT_NEAR(static_cast<double>(niah) / (steps * rows), 0.2, 0.002);
    EXPECT_NEAR(static_cast<double>(mqar) / (steps * rows), 0.1, 0.002);
  }
  // The task rows move around the batch from step to step.
  int64_t first_row_niah = 0;
  for (int64_t step = 0; step < 1000; ++step) first_row_niah += mix.kind(step, 0) == RowKind::niah;
  EXPECT_NEAR(first_row_niah / 1000.0, 0.2, 0.05);
}

// A batch as the loader would leave it: distinguishable filler.
std::vector<int32_t> filler(int64_t n, int32_t base) {
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = base + static_cast<int32_t>(i % 7);
  return v;
}

TEST(TaskMixture, RowsArePureFunctionsOfSeedStepAndRow) {
  const int64_t T = 96, B = 8;
  const auto& dir = retrieval_data().dir;
  const TaskMixture a({0.3, 0.3}, dir, T, 11, OptionSpelling::flag), b({0.3, 0.3}, dir, T, 11, OptionSpelling::flag);
  for (int64_t step : {0, 5, 1234}) {
    auto in1 = filler(B * T, 1), tg1 = filler(B * T, 2), in2 = in1, tg2 = tg1;
    a.apply(step, 0, B, in1.data(), tg1.data());
    // Another object, the batch in two micro-batches (or on two ranks): the same rows.
    b.apply(step, 0, B / 2, in2.data(), tg2.data());
    b.apply(step, B / 2, B / 2, in2.data() + B / 2 * T, tg2.data() + B / 2 * T);
    EXPECT_EQ(in1, in2);
    EXPECT_EQ(tg1, tg2);
    int64_t replaced = 0;
    for (int64_t row = 0; row < B; ++row) {
      const bool task = a.kind(step, row) != RowKind::text;
      const bool changed = !std::equal(in1.begin() + row * T, in1.begin() + (row + 1) * T, filler(B * T, 1).begin() + row * T);
      EXPECT_EQ(task, changed) << "step " << step << " row " << row << ": only task rows are replaced";
      replaced += task;
    }
    EXPECT_GT(replaced, 0);
  }
  auto x = filler(T, 0), y = filler(T, 0), tx = x, ty = y;
  a.fill(RowKind::niah, 3, 1, x.data(), tx.data());
  a.fill(RowKind::niah, 4, 1, y.data(), ty.data());
  EXPECT_NE(x, y) << "another step, another task";
  const TaskMixture other_seed({0.3, 0.3}, retrieval_data().dir, T, 12, OptionSpelling::flag);
  other_seed.fill(RowKind::niah, 3, 1, y.data(), ty.data());
  EXPECT_NE(x, y) << "another seed, another task";
}

TEST(TaskMixture, NiahRowsCountOnlyTheAnswers) {
  const auto& d = retrieval_data();
  const int64_t T = 128;
  const TaskMixture mix({1.0, 0.0}, d.dir, T, 3, OptionSpelling::flag);
  EXPECT_GE(mix.max_needles(), 2);
  const std::vector<int32_t> lead = d.tokenizer.encode(" The magic number for");
  constexpr int64_t kContext = 4;  // "KEY is " and, for a value's later ids, its earlier ones
  for (int64_t row = 0; row < 20; ++row) {
    std::vector<int32_t> in(T), tg(T);
    mix.fill(RowKind::niah, 9, row, in.data(), tg.data());
    int64_t answers = 0;
    for (int64_t t = 0; t < T; ++t) {
      if (tg[t] == model::kIgnoreId) continue;
      ++answers;
      if (t + 1 < T) {
        ASSERT_EQ(tg[t], in[t + 1]) << "row " << row << ": a target is the next token";
      }
      // Retrieval: the ids before the answer occurred earlier in the row (the needle), followed by it.
      bool copied = false;
      for (int64_t p = kContext - 1; p + 1 < t && !copied; ++p)
        copied = std::equal(in.begin() + p - kContext + 1, in.begin() + p + 1, in.begin() + t - kContext + 1) &&
                 in[p + 1] == tg[t];
      EXPECT_TRUE(copied) << "row " << row << " position " << t << ": the answer is not a copy of a needle's value";
    }
    EXPECT_GE(answers, 1) << "row " << row;
    EXPECT_LE(answers, 4 * kDefaultValueDigits) << "row " << row << ": at most 4 queries";
    // At least one needle and its query: the lead occurs twice or more.
    int64_t leads = 0;
    for (int64_t t = 0; t + static_cast<int64_t>(lead.size()) <= T; ++t)
      leads += std::equal(lead.begin(), lead.end(), in.begin() + t);
    EXPECT_GE(leads, 2) << "row " << row;
  }
}

TEST(TaskMixture, MqarRowsCountOnlyTheAnswers) {
  const auto& d = retrieval_data();
  const int64_t T = 128;
  const TaskMixture mix({0.0, 1.0}, d.dir, T, 3, OptionSpelling::flag);
  const MqarVocabulary v = mqar_vocabulary(d.tokenizer);
  EXPECT_EQ(mix.max_pairs(), 32);
  for (int64_t row = 0; row < 20; ++row) {
    std::vector<int32_t> in(T), tg(T);
    mix.fill(RowKind::mqar, 9, row, in.data(), tg.data());
    EXPECT_EQ(in[0], v.end_of_text) << "a row starts with an episode";
    int64_t answers = 0, episode_begin = 0;
    for (int64_t t = 0; t < T; ++t) {
      if (in[t] == v.end_of_text) episode_begin = t;
      if (tg[t] == model::kIgnoreId) continue;
      ++answers;
      // in[t] is a key asked again; its value is the one after its first use in this episode.
      const auto first = std::find(in.begin() + episode_begin, in.begin() + t, in[t]);
      ASSERT_NE(first, in.begin() + t) << "row " << row << " position " << t << ": the key was never given";
      EXPECT_EQ(*(first + 1), tg[t]) << "row " << row << " position " << t;
      EXPECT_TRUE(tg[t] >= v.first_value && tg[t] < v.end);
    }
    EXPECT_GE(answers, 2) << "row " << row;
  }
}

TEST(TaskMixture, BadInputIsAClearError) {
  const auto& d = retrieval_data();
  const auto make = [&](MixtureSpec spec, const std::filesystem::path& dir, int64_t seq_len, OptionSpelling spelling) {
    TaskMixture(spec, dir, seq_len, 1, spelling);
  };
  EXPECT_NE(error_of([&] { make({0.2, 0.0}, d.dir, 16, OptionSpelling::flag); })
                .find("--mix niah: --seq-len 16 is too short for NIAH rows"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make({0.2, 0.0}, d.dir, 16, OptionSpelling::field); })
                .find("mix niah: seq_len 16 is too short for NIAH rows"),
            std::string::npos);
  EXPECT_NO_THROW(make({0.0, 0.2}, d.dir, 16, OptionSpelling::flag)) << "MQAR rows fit any length";
  EXPECT_NE(error_of([&] { make({0.2, 0.0}, d.dir / "nope", 128, OptionSpelling::flag); }).find("does not exist"),
            std::string::npos);
}

}  // namespace
}  // namespace difftx::retrieval
