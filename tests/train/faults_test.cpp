// Faults in a run directory: a full disk under metrics.jsonl, two runs on one directory, a
// checkpoint of non-finite weights, a tampered state.json, a log cut off after its checkpoint.
// Nothing reported written may be lost, and every fault is an Error naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "model/model.h"
#include "model/model_io.h"
#include "model/parameters.h"
#include "support/testing.h"
#include "train/checkpoint.h"
#include "train/metrics_log.h"
#include "train/run_lock.h"

namespace difftx::train {
namespace {

namespace fs = std::filesystem;
using testing::error_of;

struct RunDir {
  RunDir() : path(fs::temp_directory_path() / ("difftx-faults-" + std::to_string(::getpid()) + "-" +
                                                std::to_string(counter++))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~RunDir() { fs::remove_all(path); }
  fs::path path;
  static inline int counter = 0;
};

model::ModelConfig tiny_config() {
  model::ModelConfig c;
  c.vocab_size = 32;
  c.hidden_size = 16;
  c.num_hidden_layers = 1;
  c.num_attention_heads = 2;
  c.num_key_value_heads = 2;
  c.head_dim = 8;
  c.intermediate_size = 32;
  c.max_position_embeddings = 16;
  c.validate();
  return c;
}

TEST(Faults, AFullDiskUnderTheMetricsLogIsAnErrorNamingIt) {
  MetricsLog log("/dev/full");  // every write fails with ENOSPC
  const std::string msg = error_of([&] { log.append(nlohmann::json{{"step", 1}, {"loss", 2.5}}); });
  EXPECT_NE(msg.find("/dev/full: cannot append a line (No space left on device)"), std::string::npos) << msg;
}

TEST(Faults, TheMetricsLogAppendsWholeLines) {
  RunDir run;
  const fs::path path = run.path / "metrics.jsonl";
  {
    MetricsLog log(path);
    log.append(nlohmann::json{{"step", 1}});
    log.sync();
  }
  MetricsLog again(path);
  again.append(nlohmann::json{{"step", 2}});
  EXPECT_EQ(io::read_whole_file(path), "{\"step\":1}\n{\"step\":2}\n");
}

TEST(Faults, ResumingDropsOnlyLinesAfterTheCheckpointAndCountsThem) {
  RunDir run;
  const fs::path path = run.path / "metrics.jsonl";
  io::write_file_atomically(path, "{\"step\":1,\"loss\":3}\n{\"step\":2,\"loss\":2}\n{\"step\":2,\"val_loss\":2}\n"
                              "{\"step\":3,\"loss\":1}\n{\"step\":4,\"lo");
  const DroppedMetrics dropped = truncate_metrics_after(path, 2);
  EXPECT_EQ(dropped.lines, 1);
  EXPECT_EQ(dropped.unreadable, 1);
  EXPECT_EQ(io::read_whole_file(path),
            "{\"step\":1,\"loss\":3}\n{\"step\":2,\"loss\":2}\n{\"step\":2,\"val_loss\":2}\n");
}

TEST(Faults, ASecondRunOnOneDirectoryIsRefusedNamingTheHolder) {
  RunDir run;
  {
    RunDirectoryLock first(run.path);
    const std::string msg = error_of([&] { RunDirectoryLock second(run.path); });
    EXPECT_NE(msg.find("another difftx train (pid " + std::to_string(::getpid()) + ")"), std::string::npos) << msg;
  }
  RunDirectoryLock after_release(run.path);  // the lock ends with its holder
}

struct CheckpointFixture {
  CheckpointFixture() : model(tiny_config()), m(model.weight_floats(), 0.0f), v(model.weight_floats(), 0.0f) {
    model::init_parameters(model.config, model.table, model.host_weights(), 1);
  }
  fs::path save(const fs::path& run_dir, int64_t step, const std::vector<fs::path>& extra_files = {}) {
    return save_checkpoint(run_dir, step, model, OptimizerMoments{m.data(), v.data(), step},
                           nlohmann::json{{"options", nlohmann::json::object()}, {"train_data", {{"step", 0}}}},
                           extra_files, 2);
  }
  model::Model model;
  std::vector<float> m, v;
};

void expect_no_temporary_directory(const fs::path& run_dir) {
  for (const auto& e : fs::directory_iterator(run_dir / "checkpoints"))
    EXPECT_EQ(e.path().filename().string().rfind(".tmp_", 0), std::string::npos) << e.path();
}

TEST(Faults, NonFiniteWeightsAreNeverCheckpointedAndLeaveNoTemporaryDirectory) {
  RunDir run;
  CheckpointFixture f;
  const fs::path good = f.save(run.path, 1);
  const model::ParamInfo& p = f.model.table.params().back();
  f.model.host_weights()[p.offset + 3] = std::numeric_limits<float>::quiet_NaN();
  const std::string msg = error_of([&] { f.save(run.path, 2); });
  EXPECT_NE(msg.find("tensor '" + p.name + "' holds a non-finite value"), std::string::npos) << msg;
  EXPECT_EQ(*latest_checkpoint(run.path), good);
  expect_no_temporary_directory(run.path);
}

// The weights, moments and state are written into .tmp_step_N before the extra files fail: the
// partial directory is removed and `latest` still names the previous checkpoint.
TEST(Faults, ACheckpointWhoseWritingFailsLeavesNoTemporaryDirectory) {
  RunDir run;
  CheckpointFixture f;
  const fs::path good = f.save(run.path, 1);
  const fs::path missing = run.path / "tokenizer.tiktoken";
  std::string msg = error_of([&] { f.save(run.path, 2, {missing}); });
  EXPECT_NE(msg.find(missing.string()), std::string::npos) << msg;
  fs::create_directories(run.path / "not_a_file.json");
  msg = error_of([&] { f.save(run.path, 2, {run.path / "not_a_file.json"}); });
  EXPECT_NE(msg.find("not_a_file.json"), std::string::npos) << msg;
  EXPECT_EQ(*latest_checkpoint(run.path), good);
  EXPECT_FALSE(fs::exists(run.path / "checkpoints" / "step_00000002"));
  expect_no_temporary_directory(run.path);
}

TEST(Faults, NonFiniteWeightsAreRefusedOnLoadNamingTheTensor) {
  RunDir run;
  CheckpointFixture f;
  const fs::path dir = run.path / "model";
  const model::ParamInfo& p = f.model.table.params().front();
  f.model.host_weights()[p.offset] = std::numeric_limits<float>::infinity();
  model::save_model_dir(f.model, dir);
  const std::string msg = error_of([&] { model::load_model_dir(dir); });
  EXPECT_NE(msg.find("model.safetensors: tensor '" + p.name + "' holds a non-finite value (inf at element 0)"),
            std::string::npos)
      << msg;
}

TEST(Faults, ATamperedStateIsRefused) {
  CheckpointFixture f;
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {-5, "'step' must be a positive integer, got -5"},
      {"3", "'step' must be a positive integer"},
      {7, "'step' is 7 but the directory is step_00000003"},
  };
  for (const auto& [step, expected] : cases) {
    RunDir run;
    const fs::path dir = f.save(run.path, 3);
    nlohmann::json state = io::read_json_file(dir / "state.json");
    state["step"] = step;
    io::write_json_file(dir / "state.json", state);
    model::Model into(tiny_config());
    std::vector<float> m(into.weight_floats()), v(into.weight_floats());
    OptimizerMoments moments{m.data(), v.data()};
    const std::string msg = error_of([&] { load_checkpoint(dir, into, moments); });
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace difftx::train
