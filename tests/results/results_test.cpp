// The results schema's serialisation: what the parse functions read, to_json writes back with
// the same keys and numbers (the report fixtures, every optional object and nulls), and
// writing what was read is stable; the analyses write only the objects they hold.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/json_file.h"
#include "results/results.h"
#include "source_dir.h"

namespace difftx::results {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kFixtures = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/report";

// Every key of `read` must be in `written` with an equal value (numbers as doubles, null as
// NaN; a null object may be left out), except the keys named in `unknown`; the paths that
// differ are returned.
void compare(const json& read, const json& written, const std::string& path, const std::vector<std::string>& unknown,
             std::vector<std::string>& differences) {
  if (read.is_object()) {
    for (const auto& [key, value] : read.items()) {
      if (std::find(unknown.begin(), unknown.end(), key) != unknown.end()) continue;
      if (!written.is_object() || !written.contains(key)) {
        if (!value.is_null()) differences.push_back(path + "." + key + " (missing)");  // null objects are absent
      } else {
        compare(value, written[key], path + "." + key, unknown, differences);
      }
    }
  } else if (read.is_array()) {
    if (!written.is_array() || written.size() != read.size()) return differences.push_back(path + " (size)");
    for (size_t i = 0; i < read.size(); ++i)
      compare(read[i], written[i], path + "[" + std::to_string(i) + "]", unknown, differences);
  } else if (read.is_number() || read.is_null()) {
    const double a = read.is_null() ? NAN : read.get<double>();
    const double b = written.is_number() ? written.get<double>() : NAN;
    if (!(a == b || (std::isnan(a) && std::isnan(b))))
      differences.push_back(path + " (" + read.dump() + " vs " + written.dump() + ")");
  } else if (read != written) {
    differences.push_back(path + " (" + read.dump() + " vs " + written.dump() + ")");
  }
}

TEST(ResultsSchema, WritesBackWhatItReads) {
  for (const char* file : {"results.json", "results_minimal.json"}) {
    const json fixture = io::read_json_file(kFixtures / file);
    const ExperimentResults r = parse_experiment_results(fixture, file);
    const json written = to_json(r);
    std::vector<std::string> differences;
    // results_minimal.json has keys outside the schema, which readers ignore.
    compare(fixture, written, file, {"extra_metric", "future_key"}, differences);
    EXPECT_TRUE(differences.empty()) << file << ": " << differences.size() << " differences, first "
                                     << differences.front();
    // Writing what was read is a fixed point (NaN written as null, absent extras as defaults).
    EXPECT_EQ(to_json(parse_experiment_results(written, file)).dump(), written.dump()) << file;
  }
}

// A multi-seed compare's results: the seeds, every run's seed and the statistics survive a
// write and a read, and writing what was read is a fixed point (the statistics are derived from
// the runs, so they come back equal).
TEST(ResultsSchema, SeveralSeedsRoundTrip) {
  const json fixture = io::read_json_file(kFixtures / "results.json");
  json d = fixture;
  d["models"] = json::array();
  for (int seed : {2, 5, 9})
    for (json m : fixture["models"]) {
      m["seed"] = seed;
      m["train"]["final_val_loss"] = m["train"]["final_val_loss"].get<double>() + 0.01 * seed;
      d["models"].push_back(m);
    }
  d["setup"]["seeds"] = {2, 5, 9};
  const ExperimentResults r = parse_experiment_results(d, "seeds.json");
  ASSERT_EQ(r.models.size(), 9u);
  EXPECT_EQ(r.setup.seeds, (std::vector<int64_t>{2, 5, 9}));
  EXPECT_EQ(r.models[4].seed, 5);
  const json written = to_json(r);
  ASSERT_TRUE(written.contains("statistics"));
  EXPECT_EQ(written["statistics"]["metrics"]["val_loss"]["baseline"]["n"], 3);
  EXPECT_EQ(written["models"][8]["seed"], 9);
  std::vector<std::string> differences;
  compare(d, written, "seeds.json", {}, differences);
  EXPECT_TRUE(differences.empty()) << differences.size() << " differences, first " << differences.front();
  EXPECT_EQ(to_json(parse_experiment_results(written, "seeds.json")).dump(), written.dump());
}

TEST(ResultsSchema, AnalysesWriteOnlyWhatTheyHold) {
  Analyses a;
  EXPECT_EQ(to_json(a), json::object());
  a.quantization = {{0, 3.5, 100, std::nullopt}, {4, 3.75, 100, 0.5}};
  const json j = to_json(a);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_FALSE(j["quantization"][0].contains("niah_accuracy"));
  EXPECT_EQ(j["quantization"][1]["niah_accuracy"], 0.5);
  EXPECT_EQ(j["quantization"][1]["tokens"], 100);
  const json null_accuracy = json::parse(R"([{"bits": 0, "val_loss": 1, "niah_accuracy": null}])");
  EXPECT_TRUE(std::isnan(parse_quantization(io::JsonField(null_accuracy, "q")).front().niah_accuracy_or_nan()));
}

TEST(ResultsSchema, NiahMeans) {
  NiahResults n;
  n.cells = {{256, 1, 1, 0.0, 1.0, 2, 2, 2}, {256, 2, 2, 0.0, 0.25, 2, 4, 1}, {256, 2, 2, 1.0, NAN, 0, 0, 0}};
  EXPECT_DOUBLE_EQ(mean_cell_accuracy(n), 0.625);  // every finite cell weighs the same
  n.cells.clear();
  EXPECT_TRUE(std::isnan(mean_cell_accuracy(n)));
}

}  // namespace
}  // namespace difftx::results
