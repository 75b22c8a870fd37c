#include "experiment/train_record.h"

#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/input_file.h"
#include "io/json_field.h"
#include "io/json_file.h"

namespace difftx::experiment {
namespace {

struct StepLine {
  int64_t step = 0;
  double loss = 0, ms = 0;
};

}  // namespace

results::TrainResults train_record(const std::filesystem::path& run_dir, int64_t tokens_per_step, int64_t max_points) {
  const std::filesystem::path path = run_dir / "metrics.jsonl";
  DIFFTX_CHECK(std::filesystem::is_regular_file(path), path.string(), ": missing (not a difftx train run directory)");
  std::istringstream in(io::read_whole_file(path));
  std::vector<StepLine> steps;
  results::TrainResults t;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::string where = path.string() + " line " + std::to_string(number);
    const nlohmann::json j = io::parse_json_text(line, where);
    DIFFTX_CHECK(j.is_object() && j.contains("step"), path.string(), " line ", number, ": no \"step\"");
    const io::JsonField fields(j, where);
    const int64_t step = fields.at("step").integer();
    if (j.contains("val_loss"))
      t.val_curve.push_back({step, step * tokens_per_step, fields.at("val_loss").number()});
    else
      steps.push_back({step, fields.at("loss").number(), j.contains("ms") ? fields.at("ms").number() : 0.0});
  }
  DIFFTX_CHECK(!steps.empty(), path.string(), ": no training step recorded");

  for (const StepLine& s : steps) t.seconds += s.ms / 1e3;
  const size_t stride = (steps.size() + static_cast<size_t>(max_points) - 1) / static_cast<size_t>(max_points);
  for (size_t i = 0; i < steps.size(); ++i)
    if (i % stride == stride - 1 || i + 1 == steps.size())
      t.curve.push_back({steps[i].step, steps[i].step * tokens_per_step, steps[i].loss});
  t.tokens = static_cast<double>(steps.back().step * tokens_per_step);
  t.tokens_per_second = t.seconds > 0 ? static_cast<double>(steps.size() * tokens_per_step) / t.seconds : 0.0;
  t.final_train_loss = steps.back().loss;
  t.final_val_loss = t.val_curve.empty() ? std::numeric_limits<double>::quiet_NaN() : t.val_curve.back().loss;
  return t;
}

}  // namespace difftx::experiment
