// results.json -> charts -> index.html: the committed fixtures render completely, bad input is
// named by its key path, and the page is self-contained and escapes what it shows.
#include <gtest/gtest.h>
#include "source_dir.h"

#include <filesystem>
#include <string>

#include "core/error.h"
#include "io/input_file.h"
#include "io/io_test_files.h"
#include "io/json_file.h"
#include "report/report_charts.h"
#include "report/report_page.h"
#include "report/report_writer.h"
#include "results/results.h"
#include "report/svg_text.h"
#include "report/svg_checks.h"
#include "support/testing.h"

namespace difftx::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using results::kResultsSchema;
using results::parse_experiment_results;
using results::read_experiment_results;
using testing::checked_svg;
using testing::count_class;
using testing::error_of;
using testing::expect_contains;

const fs::path kFixtures = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/report";

json full_fixture() { return io::read_json_file(kFixtures / "results.json"); }

std::string parse_error(const json& document) {
  return error_of([&] { parse_experiment_results(document, "results.json"); });
}

TEST(ExperimentResults, ReadsTheFullFixture) {
  const ExperimentResults r = read_experiment_results(kFixtures / "results.json");
  EXPECT_EQ(r.schema, kResultsSchema);
  EXPECT_EQ(r.setup.preset, "small");
  EXPECT_EQ(r.setup.tokens_per_model, 2000000);
  EXPECT_DOUBLE_EQ(r.setup.mixture.at("niah"), 0.2);
  ASSERT_EQ(r.models.size(), 3u);
  const ModelResults& diff = r.models[1];
  EXPECT_EQ(diff.name, "diff");
  EXPECT_EQ(diff.layers, 6);
  EXPECT_EQ(diff.hidden_size, 256);
  EXPECT_EQ(diff.train.curve.size(), 245u);
  EXPECT_EQ(diff.train.val_curve.size(), 10u);
  ASSERT_TRUE(diff.niah && diff.mqar && diff.attention_allocation && diff.outliers && diff.attention_map);
  EXPECT_EQ(diff.niah->cells.size(), 40u);
  EXPECT_EQ(diff.quantization.size(), 5u);
  EXPECT_EQ(diff.attention_map->tokens.size(), diff.attention_map->weights.size());
  EXPECT_EQ(diff.attention_map->tokens[diff.attention_map->answer_begin], " 47");
}

TEST(ExperimentResults, ReadsTheMinimalFixtureWithNullsAndUnknownKeys) {
  const ExperimentResults r = read_experiment_results(kFixtures / "results_minimal.json");
  ASSERT_EQ(r.models.size(), 2u);
  EXPECT_TRUE(r.setup.mixture.empty());
  for (const auto& m : r.models) {
    EXPECT_FALSE(m.niah || m.mqar || m.attention_allocation || m.outliers || m.attention_map);
    EXPECT_TRUE(m.quantization.empty());
    EXPECT_TRUE(std::isnan(m.train.tokens_per_second));  // null
    EXPECT_TRUE(std::isnan(m.train.val_curve[3].loss));
  }
}

TEST(ExperimentResults, ErrorsNameTheKeyPath) {
  json d = full_fixture();
  d["models"][1]["train"].erase("curve");
  expect_contains(parse_error(d), "results.json: models[1].train: missing key 'curve'");

  d = full_fixture();
  d["models"][2]["train"]["curve"][3]["loss"] = "low";
  expect_contains(parse_error(d), "results.json: models[2].train.curve[3].loss: expected a number, got \"low\"");

  d = full_fixture();
  d["models"][0]["parameters"] = 1.5;
  expect_contains(parse_error(d), "models[0].parameters: expected an integer, got 1.5");

  d = full_fixture();
  d["models"][0]["name"] = nullptr;
  expect_contains(parse_error(d), "models[0].name: expected a string, got null");

  d = full_fixture();
  d["schema"] = "difftx.experiment.compare/2";
  expect_contains(parse_error(d), "results.json: schema: expected \"difftx.experiment.compare/1\"");

  d = full_fixture();
  d.erase("setup");
  expect_contains(parse_error(d), "results.json: missing key 'setup'");

  d = full_fixture();
  d["models"][1]["attention_map"]["weights"].erase(0);
  expect_contains(parse_error(d), "models[1].attention_map.weights: 495 weights for 496 tokens");

  d = full_fixture();
  d["models"][1]["attention_map"]["answer_span"] = json::array({400, 600});
  expect_contains(parse_error(d), "models[1].attention_map.answer_span: [400, 600) is not a non-empty span");

  d = full_fixture();
  d["models"][2]["name"] = "diff";
  expect_contains(parse_error(d), "models[2].name: model name \"diff\" is used twice");

  d = full_fixture();
  d["models"] = json::array();
  expect_contains(parse_error(d), "results.json: models: no models");

  d = full_fixture();
  d["models"][0]["niah"]["cells"] = json::object();
  expect_contains(parse_error(d), "models[0].niah.cells: expected an array, got {}");

  expect_contains(parse_error(json::array()), "results.json: expected an object, got []");
}

TEST(ReportCharts, TheFullFixtureGivesEveryChartWellFormed) {
  const ReportCharts charts = build_report_charts(read_experiment_results(kFixtures / "results.json"));
  EXPECT_TRUE(charts.omitted.empty());
  std::vector<std::string> files;
  for (const auto& c : charts.charts) {
    files.push_back(c.file);
    SCOPED_TRACE(c.file);
    const auto root = checked_svg(c.svg);
    EXPECT_EQ(root.attribute("width"), svg_number(c.width));
    EXPECT_EQ(root.attribute("height"), svg_number(c.height));
    EXPECT_FALSE(c.caption.empty());
  }
  EXPECT_EQ(files, (std::vector<std::string>{"loss_curves.svg", "niah_heatmap.svg", "attention_map.svg",
                                             "attention_allocation.svg", "outliers.svg", "quantization.svg"}));
  // The data drawn: 3 models x 8 rows x 5 depths cells; 3 x 4 x 2 bars; 3 x 5 x 2 quantization markers.
  EXPECT_EQ(count_class(checked_svg(charts.charts[1].svg), "cell"), 3u * 8u * 5u);
  EXPECT_EQ(count_class(checked_svg(charts.charts[4].svg), "bar"), 3u * 4u * 2u);
  EXPECT_EQ(count_class(checked_svg(charts.charts[5].svg), "marker"), 3u * 5u * 2u);
  EXPECT_EQ(count_class(checked_svg(charts.charts[0].svg), "marker"), 3u * 10u);  // validation points
  EXPECT_EQ(count_class(checked_svg(charts.charts[2].svg), "answer-span"), 3u);
}

TEST(ReportCharts, TheMinimalFixtureGivesLossCurvesAndSaysWhatIsMissing) {
  const ReportCharts charts = build_report_charts(read_experiment_results(kFixtures / "results_minimal.json"));
  ASSERT_EQ(charts.charts.size(), 1u);
  EXPECT_EQ(charts.charts[0].file, "loss_curves.svg");
  const auto root = checked_svg(charts.charts[0].svg);
  EXPECT_EQ(count_class(root, "marker"), 2u * 9u);  // one validation loss is null: a gap
  EXPECT_EQ(charts.omitted.size(), 5u);
  expect_contains(charts.omitted[0], "NIAH accuracy heatmap: no model has niah results");
}

TEST(ReportPage, SelfContainedEscapedAndLinksEveryChart) {
  json d = full_fixture();
  d["models"][0]["name"] = "<img src=x onerror=alert(1)>";
  d["setup"]["machine"] = "cpu & \"friends\"";
  const ExperimentResults r = parse_experiment_results(d, "results.json");
  const ReportCharts charts = build_report_charts(r);
  const std::string html = report_page_html(r, charts, "results.json");
  for (const auto& c : charts.charts) expect_contains(html, "<img src=\"" + c.file + "\"");
  expect_contains(html, "href=\"results.json\"");
  expect_contains(html, "&lt;img src=x onerror=alert(1)&gt;");
  expect_contains(html, "cpu &amp; &quot;friends&quot;");
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  expect_contains(html, "10,485,760 to 10,518,528");  // the fairness check on parameters
  expect_contains(html, "Training tokens: 2,000,000 for every model");
}

TEST(ReportPage, WarnsWhenModelsDidNotTrainOnEqualTerms) {
  json d = full_fixture();
  d["models"][2]["train"]["tokens"] = 1500000;
  d["models"][2]["parameters"] = 12000000;
  const ExperimentResults r = parse_experiment_results(d, "results.json");
  const std::string html = report_page_html(r, build_report_charts(r), "results.json");
  expect_contains(html, "Training tokens: differ, from 1,500,000 to 2,000,000");
  expect_contains(html, "more than 2%");
}

// Three seeds of the fixture's models: diff 0.1 below the baseline on every seed while the
// seeds spread by 0.3 (outside the seed noise, paired), diff2 above on one seed and below on two
// (within it).
TEST(ReportPage, SeveralSeedsGetPointsErrorBarsAndWords) {
  json d = full_fixture();
  json models = json::array();
  for (int seed : {1, 2, 3})
    for (json m : d["models"]) {
      const double base = 4.0 + 0.3 * seed;
      const std::string name = m["name"];
      m["seed"] = seed;
      m["niah"]["mean_accuracy"] = 0.5 + 0.1 * seed;  // pooled: the fixture holds cells only
      m["train"]["final_val_loss"] = name == "baseline" ? base : name == "diff" ? base - 0.1 + 0.01 * seed
                                                                                 : base + (seed == 2 ? 0.2 : -0.1);
      models.push_back(m);
    }
  d["models"] = models;
  d["setup"]["seeds"] = {1, 2, 3};
  const ExperimentResults r = parse_experiment_results(d, "results.json");
  EXPECT_EQ(model_colour(r, 0), model_colour(r, 3));  // a variant keeps its colour over seeds
  EXPECT_NE(model_colour(r, 0), model_colour(r, 1));
  EXPECT_EQ(model_label(r, 4), "diff, seed 2");

  const ReportCharts charts = build_report_charts(r);
  ASSERT_EQ(charts.charts.back().file, "seed_spread.svg");
  const auto root = checked_svg(charts.charts.back().svg);
  EXPECT_EQ(count_class(root, "seed"), 3u * 9u);  // val loss, NIAH and MQAR panels, one dot per run
  EXPECT_EQ(count_class(root, "mean"), 3u * 3u);
  EXPECT_EQ(count_class(root, "interval"), 3u * 3u * 3u);  // whisker and two caps

  const std::string html = report_page_html(r, charts, "results.json");
  expect_contains(html, "<h2>Across seeds</h2>");
  expect_contains(html, "Every variant trained once per seed (1, 2, 3)");
  expect_contains(html, "diff, seed 3");
  const size_t outside = html.find("Outside the seed noise:"), within = html.find("Within the seed noise:");
  ASSERT_NE(outside, std::string::npos);
  ASSERT_NE(within, std::string::npos);
  const size_t diff_lower = html.find("diff's val loss is lower than the baseline's by 0.08");
  const size_t diff2 = html.find("diff2 against the baseline on val loss");
  EXPECT_TRUE(outside < diff_lower && diff_lower < within) << html.substr(outside, 2000);
  EXPECT_GT(diff2, within);

  // One seed: no section, no chart, and the page names the one seed.
  const ExperimentResults one = read_experiment_results(kFixtures / "results.json");
  const std::string single = report_page_html(one, build_report_charts(one), "results.json");
  EXPECT_EQ(single.find("Across seeds"), std::string::npos);
  expect_contains(single, "from the same seed (");
}

TEST(ReportWriter, WritesTheDirectoryAndCopiesResultsWhenElsewhere) {
  testing::TempDir dir;
  const ReportSummary s = write_report(kFixtures / "results_minimal.json", dir / "out");
  EXPECT_EQ(s.written.size(), 3u);
  EXPECT_EQ(s.omitted.size(), 5u);
  for (const char* f : {"results.json", "loss_curves.svg", "index.html"}) EXPECT_TRUE(fs::exists(dir / "out" / f)) << f;
  EXPECT_EQ(io::read_whole_file(dir / "out/results.json"), io::read_whole_file(kFixtures / "results_minimal.json"));

  // In place: the charts go beside results.json, which is left alone.
  fs::copy_file(kFixtures / "results.json", dir / "results.json");
  const ReportSummary in_place = write_report(dir / "results.json", dir.path());
  EXPECT_EQ(in_place.written.size(), 7u);
  EXPECT_EQ(in_place.written.back(), dir / "index.html");

  testing::write_bytes(dir / "broken.json", "{\"schema\": ");
  expect_contains(error_of([&] { write_report(dir / "broken.json", dir / "x"); }), "broken.json: invalid JSON");
  EXPECT_FALSE(fs::exists(dir / "x"));  // nothing written for bad input
}

}  // namespace
}  // namespace difftx::report
