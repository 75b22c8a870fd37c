// The training record of results.json, read back from metrics.jsonl: curves in tokens, the
// thinned train curve keeps its last step, val points are kept apart, seconds add up the steps'
// times, final losses are the last ones; broken files are clear errors that name the line.
#include <cmath>

#include <gtest/gtest.h>

#include "data/data_fixtures.h"
#include "experiment/train_record.h"
#include "support/testing.h"

namespace difftx::experiment {
namespace {

TEST(TrainRecord, CurvesTokensTimesAndFinalLosses) {
  data::testing::TempDir dir;
  std::string lines;
  for (int step = 1; step <= 10; ++step) {
    lines += "{\"grad_norm\":1,\"loss\":" + std::to_string(10 - step) + ",\"ms\":500,\"step\":" + std::to_string(step) + "}\n";
    if (step % 5 == 0) lines += "{\"step\":" + std::to_string(step) + ",\"val_loss\":" + std::to_string(20 - step) + "}\n";
  }
  dir.write("metrics.jsonl", lines);
  const nlohmann::json r = results::to_json(train_record(dir.path(), 100, 4));
  EXPECT_EQ(r["tokens"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(r["seconds"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(r["tokens_per_second"].get<double>(), 200.0);
  EXPECT_EQ(r["final_train_loss"].get<double>(), 0);
  EXPECT_EQ(r["final_val_loss"].get<double>(), 10);
  // 10 steps thinned to at most 4 points: every third step and the last.
  const auto& curve = r["curve"];
  ASSERT_EQ(curve.size(), 4u);
  EXPECT_EQ(curve[0]["step"], 3);
  EXPECT_EQ(curve[0]["tokens"], 300);
  EXPECT_EQ(curve[0]["loss"].get<double>(), 7);
  EXPECT_EQ(curve[3]["step"], 10);
  ASSERT_EQ(r["val_curve"].size(), 2u);
  EXPECT_EQ(r["val_curve"][0]["tokens"], 500);
  EXPECT_EQ(r["val_curve"][1]["val_loss"].get<double>(), 10);
}

TEST(TrainRecord, WithoutValidationTheFinalValLossIsNull) {
  data::testing::TempDir dir;
  dir.write("metrics.jsonl", "{\"loss\":3,\"ms\":10,\"step\":1}\n");
  const results::TrainResults r = train_record(dir.path(), 8);
  EXPECT_TRUE(std::isnan(r.final_val_loss));
  EXPECT_EQ(results::to_json(r)["final_val_loss"].dump(), "null");  // NaN is written as null
  EXPECT_EQ(r.curve.size(), 1u);
}

TEST(TrainRecord, BrokenRunsAreClearErrors) {
  data::testing::TempDir dir;
  EXPECT_NE(testing::error_of([&] { train_record(dir.path(), 8); }).find("metrics.jsonl: missing"), std::string::npos);
  dir.write("metrics.jsonl", "{\"loss\":3,\"step\":1}\n{\"loss\":\n");
  EXPECT_NE(testing::error_of([&] { train_record(dir.path(), 8); }).find("line 2"), std::string::npos);
  dir.write("metrics.jsonl", "{\"loss\":3}\n");
  EXPECT_NE(testing::error_of([&] { train_record(dir.path(), 8); }).find("no \"step\""), std::string::npos);
  dir.write("metrics.jsonl", "{\"step\":5,\"val_loss\":3}\n");
  EXPECT_NE(testing::error_of([&] { train_record(dir.path(), 8); }).find("no training step"), std::string::npos);
}

}  // namespace
}  // namespace difftx::experiment
