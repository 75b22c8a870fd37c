#include "train/checkpoint.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "model/model_io.h"

namespace difftx {
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

}  // namespace

fs::path save_checkpoint(const fs::path& run_dir, int64_t step, const Model& model, const OptimizerMoments& moments,
                         const json& state, const std::vector<fs::path>& extra_files, int keep) {
  const fs::path dir = run_dir / "checkpoints";
  fs::create_directories(dir);
  const fs::path final_dir = dir / step_name(step);
  const fs::path temp_dir = dir / (".tmp_" + step_name(step));
  fs::remove_all(temp_dir);

  save_model_dir(model, temp_dir);
  std::vector<SafetensorsEntry> tensors;
  for (const ParamInfo& p : model.table.params()) {
    tensors.push_back({"m." + p.name, p.shape, std::span<const float>(moments.m + p.offset, p.numel)});
    tensors.push_back({"v." + p.name, p.shape, std::span<const float>(moments.v + p.offset, p.numel)});
  }
  write_safetensors(temp_dir / "optimizer.safetensors", tensors,
                    {{"steps_taken", std::to_string(moments.steps_taken)}});
  json full = state;
  full["step"] = step;
  write_json_file(temp_dir / "state.json", full);
  for (const fs::path& f : extra_files) fs::copy_file(f, temp_dir / f.filename(), fs::copy_options::overwrite_existing);

  fs::remove_all(final_dir);  // only when re-saving a step already saved (same contents)
  fs::rename(temp_dir, final_dir);
  // Writing `latest` atomically fsyncs the checkpoints directory, which also makes the
  // rename above durable.
  write_file_atomically(dir / "latest", final_dir.filename().string() + "\n");

  auto all = complete_checkpoints(dir);
  for (size_t i = 0; i + std::max(keep, 1) < all.size(); ++i) fs::remove_all(all[i]);
  return final_dir;
}

std::optional<fs::path> latest_checkpoint(const fs::path& run_dir) {
  const fs::path dir = run_dir / "checkpoints";
  if (!fs::exists(dir / "latest")) return std::nullopt;
  std::string name = read_whole_file(dir / "latest");
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) name.pop_back();
  DIFFTX_CHECK(!name.empty() && name.find('/') == std::string::npos, (dir / "latest").string(),
               ": does not name a checkpoint directory");
  DIFFTX_CHECK(fs::is_directory(dir / name), (dir / "latest").string(), ": names '", name,
               "', which does not exist");
  return dir / name;
}

json load_checkpoint(const fs::path& checkpoint, Model& model, OptimizerMoments& moments) {
  Model saved = load_model_dir(checkpoint);
  const json have = config_to_json(model.config), want = config_to_json(saved.config);
  for (const auto& [key, value] : want.items())
    DIFFTX_CHECK(have.at(key) == value, checkpoint.string(), ": config key '", key, "' is ", value.dump(),
                 " in the checkpoint but ", have.at(key).dump(), " in the run's config");
  std::copy(saved.weights.data(), saved.weights.data() + saved.weights.size(), model.weights.data());

  SafetensorsReader reader(checkpoint / "optimizer.safetensors");
  for (const ParamInfo& p : model.table.params()) {
    reader.read_f32("m." + p.name, std::span<float>(moments.m + p.offset, p.numel), p.shape);
    reader.read_f32("v." + p.name, std::span<float>(moments.v + p.offset, p.numel), p.shape);
  }
  const auto& meta = reader.metadata();
  auto it = meta.find("steps_taken");
  DIFFTX_CHECK(it != meta.end(), (checkpoint / "optimizer.safetensors").string(), ": no steps_taken in __metadata__");
  moments.steps_taken = std::stoll(it->second);

  const fs::path state_path = checkpoint / "state.json";
  const json state = read_json_file(state_path);
  DIFFTX_CHECK(state.is_object() && state.contains("step"), state_path.string(), ": missing key 'step'");
  return state;
}

}  // namespace difftx
