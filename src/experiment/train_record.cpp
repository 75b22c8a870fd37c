#include "experiment/train_record.h"

#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/input_file.h"
#include "io/json_file.h"

namespace difftx::experiment {

nlohmann::json train_record(const std::filesystem::path& run_dir, int64_t tokens_per_step, int64_t max_points) {
  using nlohmann::json;
  const std::filesystem::path path = run_dir / "metrics.jsonl";
  DIFFTX_CHECK(std::filesystem::is_regular_file(path), path.string(), ": missing (not a difftx train run directory)");
  std::istringstream in(read_whole_file(path));
  std::vector<json> steps;
  json val_curve = json::array();
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const json j = parse_json_text(line, path.string() + " line " + std::to_string(number));
    DIFFTX_CHECK(j.is_object() && j.contains("step"), path.string(), " line ", number, ": no \"step\"");
    const int64_t step = j["step"].get<int64_t>();
    if (j.contains("val_loss"))
      val_curve.push_back({{"step", step}, {"tokens", step * tokens_per_step}, {"val_loss", j["val_loss"]}});
    else
      steps.push_back(j);
  }
  DIFFTX_CHECK(!steps.empty(), path.string(), ": no training step recorded");

  double seconds = 0;
  for (const json& s : steps) seconds += s.value("ms", 0.0) / 1e3;
  const size_t stride = (steps.size() + static_cast<size_t>(max_points) - 1) / static_cast<size_t>(max_points);
  json curve = json::array();
  for (size_t i = 0; i < steps.size(); ++i)
    if (i % stride == stride - 1 || i + 1 == steps.size()) {
      const int64_t step = steps[i]["step"].get<int64_t>();
      curve.push_back({{"step", step}, {"tokens", step * tokens_per_step}, {"loss", steps[i]["loss"]}});
    }
  const int64_t last = steps.back()["step"].get<int64_t>();
  const double tokens = static_cast<double>(last * tokens_per_step);
  return {{"tokens", tokens},
          {"seconds", seconds},
          {"tokens_per_second", seconds > 0 ? static_cast<double>(steps.size() * tokens_per_step) / seconds : 0.0},
          {"final_train_loss", steps.back()["loss"]},
          {"final_val_loss", val_curve.empty() ? json(nullptr) : val_curve.back()["val_loss"]},
          {"curve", curve},
          {"val_curve", val_curve}};
}

}  // namespace difftx::experiment
