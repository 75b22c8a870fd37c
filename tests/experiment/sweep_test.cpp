// The scaling sweep's pieces that need no training: configs scaled in width keep the preset's
// head dim, depth and kv ratio, and are valid models; the fits of synthetic points recover the
// matching ratio they were made with, per seed and with an interval.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "experiment/sweep.h"
#include "io/json_file.h"
#include "model/config.h"
#include "source_dir.h"
#include "support/testing.h"

namespace difftx::experiment {
namespace {

using nlohmann::json;

json preset(const std::string& variant) {
  return io::read_json_file(std::filesystem::path(DIFFTX_SOURCE_DIR) / "configs/tiny" / (variant + ".json"));
}

TEST(Sweep, ScaledConfigsKeepTheShape) {
  for (const char* variant : {"baseline", "diff", "diff2"}) {
    const json p = preset(variant);
    for (int64_t width : {64, 128, 192, 384}) {
      const json c = scaled_config(p, width, variant);
      SCOPED_TRACE(std::string(variant) + " width " + std::to_string(width));
      EXPECT_EQ(c["hidden_size"], width);
      EXPECT_EQ(c["head_dim"], p["head_dim"]);
      EXPECT_EQ(c["num_hidden_layers"], p["num_hidden_layers"]);
      EXPECT_EQ(c["num_attention_heads"].get<int64_t>() * p["hidden_size"].get<int64_t>(),
                p["num_attention_heads"].get<int64_t>() * width);
      EXPECT_EQ(c["intermediate_size"].get<int64_t>() % 8, 0);
      EXPECT_NEAR(c["intermediate_size"].get<double>() / width, p["intermediate_size"].get<double>() / 96, 0.07);
      model::config_from_json(c, "scaled");  // a valid model
    }
  }
  // Baseline and diff2 stay within a few percent of equal parameters, as the preset is.
  const auto params = [](const char* v, int64_t w) { return model::config_from_json(scaled_config(preset(v), w, v), v).total_parameters(); };
  EXPECT_NEAR(static_cast<double>(params("diff2", 192)) / params("baseline", 192), 1.0, 0.02);
  EXPECT_NE(testing::error_of([] { scaled_config(preset("baseline"), 100, "tiny baseline"); }).find("multiple of 16"),
            std::string::npos);
}

// Points of L = a x^-0.1 for the baseline and the same law at x / 0.625 for diff (it reaches any
// loss with 62.5% of the size), seeds shifting a by +-1%: the fits give 0.625 per seed.
TEST(Sweep, FitsRecoverTheMatchingRatio) {
  json sweep = {{"setup", {{"variants", {"baseline", "diff"}}}}, {"points", json::array()}};
  for (int64_t seed : {1, 2, 3})
    for (int64_t width : {64, 128, 256})
      for (const char* variant : {"baseline", "diff"}) {
        const double x = 1000.0 * width * width * (variant == std::string("diff") ? 1.02 : 1.0);
        const double a = 8.0 * (1 + 0.01 * (seed - 2));
        const double loss = a * std::pow(variant == std::string("diff") ? x / 0.625 : x, -0.1);
        sweep["points"].push_back({{"width", width}, {"tokens", 1000}, {"axes", {"parameters"}}, {"variant", variant},
                                   {"seed", seed}, {"non_embedding_parameters", x}, {"trained_tokens", 1000},
                                   {"val_loss", loss}});
      }
  sweep["points"].push_back({{"width", 64}, {"tokens", 1000}, {"axes", {"parameters"}}, {"variant", "diff"},
                             {"seed", 4}, {"non_embedding_parameters", 5e6}, {"trained_tokens", 1000}, {"val_loss", nullptr}});
  const json fits = sweep_fits(sweep);
  const json& p = fits["parameters"];
  EXPECT_DOUBLE_EQ(p["at"].get<double>(), 1000.0 * 256 * 256);
  EXPECT_EQ(p["variants"]["diff"]["per_seed"].size(), 3u);  // seed 4's single unmeasured point: no fit
  EXPECT_NEAR(p["variants"]["baseline"]["exponent"]["mean"].get<double>(), -0.1, 1e-9);
  const json& ratio = p["matching"]["diff"]["ratio"];
  EXPECT_EQ(ratio["n"], 3);
  EXPECT_NEAR(ratio["mean"].get<double>(), 0.625, 1e-9);
  EXPECT_NEAR(ratio["ci95"][0].get<double>(), 0.625, 1e-6);
  EXPECT_NEAR(ratio["ci95"][1].get<double>(), 0.625, 1e-6);
  EXPECT_EQ(p["matching"]["diff"]["extrapolated_seeds"], 0);  // 62.5% of the largest size was measured
  // No point on the token axis: empty fits, no ratio.
  EXPECT_TRUE(fits["tokens"]["matching"]["diff"]["ratio"]["mean"].is_null());
}

// One seed needs twice the baseline's size, the other half: ratios average on the log scale (to
// 1, not 1.25), and the seed whose matching size (2 x0) lies past the measured sizes is flagged.
TEST(Sweep, RatiosAverageGeometricallyAndExtrapolationIsFlagged) {
  json sweep = {{"setup", {{"variants", {"baseline", "diff"}}}}, {"points", json::array()}};
  for (int64_t seed : {1, 2})
    for (double x : {1e4, 1e5, 1e6})
      for (const char* variant : {"baseline", "diff"}) {
        const double need = seed == 1 ? 2.0 : 0.5;
        const double loss = 8.0 * std::pow(variant == std::string("diff") ? x / need : x, -0.1);
        sweep["points"].push_back({{"width", 64}, {"tokens", x}, {"axes", {"tokens"}}, {"variant", variant},
                                   {"seed", seed}, {"non_embedding_parameters", 1000}, {"trained_tokens", x},
                                   {"val_loss", loss}});
      }
  const json t = sweep_fits(sweep)["tokens"];
  const json& m = t["matching"]["diff"];
  EXPECT_NEAR(m["ratio"]["mean"].get<double>(), 1.0, 1e-9);
  EXPECT_GT(m["ratio"]["ci95"][0].get<double>(), 0.0);
  EXPECT_EQ(m["extrapolated_seeds"], 1);
  EXPECT_TRUE(m["per_seed"][0]["extrapolated"].get<bool>());   // seed 1: 2e6 tokens, past 1e6
  EXPECT_FALSE(m["per_seed"][1]["extrapolated"].get<bool>());  // seed 2: 5e5 tokens, measured range
  EXPECT_DOUBLE_EQ(t["measured"][1].get<double>(), 1e6);
}

}  // namespace
}  // namespace difftx::experiment
