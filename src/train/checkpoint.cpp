#include "train/checkpoint.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "model/finite_weights.h"
#include "model/model_io.h"

namespace difftx::train {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string step_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step_%08lld", static_cast<long long>(step));
  return buf;
}

std::vector<fs::path> complete_checkpoints(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("step_", 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Writes the checkpoint's files into temp_dir.
void write_checkpoint_files(const fs::path& temp_dir, int64_t step, const model::Model& model,
                            const OptimizerMoments& moments, const json& state,
                            const std::vector<fs::path>& extra_files) {
  model::save_model_dir(model, temp_dir);
  std::vector<io::SafetensorsEntry> tensors;
  for (const model::ParamInfo& p : model.table.params()) {
    tensors.push_back({"m." + p.name, p.shape, std::span<const float>(moments.m + p.offset, p.numel)});
    tensors.push_back({"v." + p.name, p.shape, std::span<const float>(moments.v + p.offset, p.numel)});
  }
  io::write_safetensors(temp_dir / "optimizer.safetensors", tensors,
                        {{"steps_taken", std::to_string(moments.steps_taken)}});
  json full = state;
  full["step"] = step;
  io::write_json_file(temp_dir / "state.json", full);
  // Copied as every other file is written: fsync'd, and a missing or unreadable one is an Error naming it.
  for (const fs::path& f : extra_files) io::write_file_atomically(temp_dir / f.filename(), io::read_whole_file(f));
}

// state.json must agree with its directory: a tampered or foreign state would resume at the
// wrong step (a negative one gave negative learning rates).
void check_state(const json& state, const fs::path& checkpoint) {
  const std::string where = (checkpoint / "state.json").string();
  DIFFTX_CHECK(state.is_object() && state.contains("step"), where, ": missing key 'step'");
  const json& step = state.at("step");
  const int64_t named = step_of_name(checkpoint.filename().string());
  DIFFTX_CHECK(step.is_number_integer() && step.get<int64_t>() >= 1, where, ": 'step' must be a positive integer, got ",
               io::json_value_for_message(step));
  DIFFTX_CHECK(step.get<int64_t>() == named, where, ": 'step' is ", step.get<int64_t>(), " but the directory is ",
               checkpoint.filename().string());
  for (const char* key : {"options", "train_data"})
    DIFFTX_CHECK(state.contains(key) && state.at(key).is_object(), where, ": missing object '", key, "'");
}

}  // namespace

int64_t step_of_name(const std::string& name) {
  if (name.size() < 13 || name.size() > 23 || name.rfind("step_", 0) != 0 ||
      name.find_first_not_of("0123456789", 5) != std::string::npos)
    return -1;
  return std::stoll(name.substr(5));
}

fs::path save_checkpoint(const fs::path& run_dir, int64_t step, const model::Model& model,
                         const OptimizerMoments& moments, const json& state, const std::vector<fs::path>& extra_files,
                         int keep) {
  model::require_finite_weights(model, concat("checkpoint of step ", step, " (not written)"));
  const fs::path dir = run_dir / "checkpoints";
  fs::create_directories(dir);
  const fs::path final_dir = dir / step_name(step);
  const fs::path temp_dir = dir / (".tmp_" + step_name(step));
  fs::remove_all(temp_dir);
  try {
    write_checkpoint_files(temp_dir, step, model, moments, state, extra_files);
  } catch (...) {
    std::error_code ignored;  // the error being thrown is the one to report
    fs::remove_all(temp_dir, ignored);
    throw;
  }
  fs::remove_all(final_dir);  // only when re-saving a step already saved (same contents)
  fs::rename(temp_dir, final_dir);
  // Writing `latest` atomically fsyncs the checkpoints directory, which also makes the
  // rename above durable.
  io::write_file_atomically(dir / "latest", final_dir.filename().string() + "\n");

  auto all = complete_checkpoints(dir);
  for (size_t i = 0; i + std::max(keep, 1) < all.size(); ++i) fs::remove_all(all[i]);
  return final_dir;
}

std::optional<fs::path> latest_checkpoint(const fs::path& run_dir) {
  const fs::path dir = run_dir / "checkpoints";
  if (!fs::exists(dir / "latest")) return std::nullopt;
  std::string name = io::read_whole_file(dir / "latest");
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) name.pop_back();
  DIFFTX_CHECK(!name.empty() && name.find('/') == std::string::npos, (dir / "latest").string(),
               ": does not name a checkpoint directory");
  DIFFTX_CHECK(fs::is_directory(dir / name), (dir / "latest").string(), ": names '", name,
               "', which does not exist");
  return dir / name;
}

json load_checkpoint(const fs::path& checkpoint, model::Model& model, OptimizerMoments& moments) {
  model::Model saved = model::load_model_dir(checkpoint);
  const json have = model::config_to_json(model.config), want = model::config_to_json(saved.config);
  for (const auto& [key, value] : want.items())
    DIFFTX_CHECK(have.at(key) == value, checkpoint.string(), ": config key '", key, "' is ", value.dump(),
                 " in the checkpoint but ", have.at(key).dump(), " in the run's config");
  std::copy_n(saved.host_weights(), saved.weight_floats(), model.host_weights());

  io::SafetensorsReader reader(checkpoint / "optimizer.safetensors");
  for (const model::ParamInfo& p : model.table.params()) {
    reader.read_f32("m." + p.name, std::span<float>(moments.m + p.offset, p.numel), p.shape);
    reader.read_f32("v." + p.name, std::span<float>(moments.v + p.offset, p.numel), p.shape);
  }
  const auto& meta = reader.metadata();
  auto it = meta.find("steps_taken");
  DIFFTX_CHECK(it != meta.end(), (checkpoint / "optimizer.safetensors").string(), ": no steps_taken in __metadata__");
  const std::string& taken = it->second;
  DIFFTX_CHECK(!taken.empty() && taken.size() <= 15 && taken.find_first_not_of("0123456789") == std::string::npos,
               (checkpoint / "optimizer.safetensors").string(), ": steps_taken '", taken.substr(0, 20),
               "' is not a count of steps");
  moments.steps_taken = std::stoll(taken);

  const json state = io::read_json_file(checkpoint / "state.json");
  check_state(state, checkpoint);
  return state;
}

}  // namespace difftx::train
