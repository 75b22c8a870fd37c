#include "experiment/compare.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/threading.h"
#include "data/dataset.h"
#include "data/tokenizer_files.h"
#include "dist/local_communicator.h"
#include "experiment/train_record.h"
#include "io/json_file.h"
#include "kernels/attention/attention.h"
#include "model/config.h"
#include "model/model_io.h"
#include "report/report_writer.h"
#include "results/results.h"
#include "train/checkpoint.h"

namespace difftx::experiment {
namespace {

namespace fs = std::filesystem;

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

// "AMD EPYC ... , 2 threads": what the timings were taken on.
std::string machine() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, cpu = "unknown CPU";
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  return cpu + ", " + std::to_string(thread_count()) + " threads";
}

std::string presets_in(const fs::path& configs_dir) {
  std::set<std::string> names;
  if (fs::is_directory(configs_dir))
    for (const auto& e : fs::directory_iterator(configs_dir))
      if (e.is_directory()) names.insert(e.path().filename().string());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// The variants' configs, after checking the options that need no data.
std::vector<model::ModelConfig> read_configs(const CompareOptions& o) {
  DIFFTX_CHECK(o.tokens >= 1, "compare: --tokens must be positive, got ", o.tokens);
  DIFFTX_CHECK(!o.variants.empty(), "compare: no variants given");
  DIFFTX_CHECK(std::set<std::string>(o.variants.begin(), o.variants.end()).size() == o.variants.size(),
               "compare: a variant is named twice in --variants");
  std::vector<model::ModelConfig> configs;
  for (const std::string& v : o.variants) {
    const fs::path file = o.configs_dir / o.preset / (v + ".json");
    DIFFTX_CHECK(fs::is_regular_file(file), "compare: no config ", file.string(), " (presets in ", o.configs_dir.string(),
                 ": ", presets_in(o.configs_dir), ")");
    configs.push_back(model::config_from_file(file.string()));
  }
  return configs;
}

results::Setup compare_setup(const CompareOptions& o, int64_t steps, int64_t batch_tokens,
                             const data::Tokenizer& tokenizer) {
  results::Setup s;
  s.preset = o.preset;
  s.tokens_per_model = steps * batch_tokens;
  s.steps = steps;
  s.seed = o.seeds.empty() ? static_cast<int64_t>(o.train.seed) : o.seeds.front();
  s.seq_len = o.train.seq_len;
  s.micro_batch = o.train.micro_batch;
  s.batch_tokens = batch_tokens;
  s.lr = o.train.lr;
  s.warmup_steps = o.train.warmup_steps;
  s.data = o.data_dir.string();
  s.tokenizer = tokenizer.name();
  s.mixture = retrieval::mixture_to_json(o.train.mixture).get<std::map<std::string, double>>();
  s.machine = machine();
  s.init_from = o.init_from.string();
  return s;
}

// The run directory of variant `name` with `seed`.
fs::path run_dir(const CompareOptions& o, const std::string& name, int64_t seed) {
  const fs::path dir = o.out_dir / "runs" / name;
  return o.seeds.empty() ? dir : dir / ("seed_" + std::to_string(seed));
}

// --init-from: the checkpoint the run of variant `name` with `seed` starts from, the latest of
// the same variant and seed in the earlier compare (its runs/<name>/seed_<s>, or runs/<name> when
// both compares are single-seed runs, whose seed then must be this one's).
fs::path init_checkpoint(const CompareOptions& o, const std::string& name, int64_t seed) {
  const fs::path runs = o.init_from / "runs" / name, seed_dir = runs / ("seed_" + std::to_string(seed));
  const fs::path dir = o.seeds.empty() && !fs::exists(seed_dir) ? runs : seed_dir;
  const auto latest = train::latest_checkpoint(dir);
  DIFFTX_CHECK(latest.has_value(), "compare: --init-from ", o.init_from.string(), " has no checkpoint of ", name,
               " with seed ", seed, " (expected ", dir.string(), "/checkpoints)");
  if (dir == runs) {  // a single-seed run: its seed must be this one
    const nlohmann::json run = io::read_json_file(dir / "run.json");
    DIFFTX_CHECK(run.contains("options") && run["options"].value("seed", nlohmann::json()) == nlohmann::json(seed),
                 "compare: --init-from ", dir.string(), " was not trained with seed ", seed, " (see its run.json)");
  }
  return *latest;
}

// What an earlier pass over the same OUT wrote (nothing when there is no readable results.json).
std::vector<results::ModelResults> earlier_results(const fs::path& results_path) {
  if (!fs::exists(results_path)) return {};
  try {
    return results::read_experiment_results(results_path).models;
  } catch (const Error&) {  // unreadable: every finished run is analysed again
    return {};
  }
}

// The earlier results of run `dir` when it has finished its `steps`.
std::optional<results::ModelResults> finished_before(const std::vector<results::ModelResults>& earlier,
                                                     const std::string& name, int64_t seed, const fs::path& dir,
                                                     int64_t steps) {
  const auto latest = train::latest_checkpoint(dir);
  if (!latest || train::step_of_name(latest->filename().string()) < steps) return std::nullopt;
  for (const results::ModelResults& m : earlier)
    if (m.name == name && m.seed == seed && m.run_dir == dir.string()) return m;
  return std::nullopt;
}

// Trains variant `name` with `seed` (or resumes its run) for `steps`, then analyses its last
// checkpoint.
results::ModelResults train_and_analyse(const CompareOptions& o, const std::string& name, int64_t seed, int64_t steps,
                                        int64_t batch_tokens, const data::Tokenizer& tokenizer,
                                        const fs::path& init, const std::function<void(const std::string&)>& log) {
  train::TrainOptions t = o.train;
  t.init_dir = init.string();
  t.config_path = (o.configs_dir / o.preset / (name + ".json")).string();
  t.data_dir = o.data_dir.string();
  t.out_dir = run_dir(o, name, seed).string();
  t.steps = steps;
  t.seed = static_cast<uint64_t>(seed);
  t.resume = train::latest_checkpoint(t.out_dir).has_value();
  dist::LocalCommunicator one_process;
  train::train(t, one_process);

  const fs::path checkpoint = *train::latest_checkpoint(t.out_dir);
  const model::Model model = model::load_model_dir(checkpoint);
  if (o.analyse) log("analysing " + checkpoint.string());
  results::ModelResults m;
  m.train = train_record(t.out_dir, batch_tokens);
  if (o.analyse) static_cast<results::Analyses&>(m) = analyse_model(model, tokenizer, o.data_dir, o.analysis, log);
  m.name = name;
  m.seed = seed;
  m.attention = kernels::attention_kind_name(model.config.attention);
  results::set_config(m, model::config_to_json(model.config));
  m.parameters = model.config.total_parameters();
  m.run_dir = t.out_dir;
  return m;
}

}  // namespace

results::ExperimentResults run_compare(const CompareOptions& o, const std::function<void(const std::string&)>& log) {
  const std::vector<model::ModelConfig> configs = read_configs(o);
  data::read_dataset(o.data_dir);  // a clear error for a directory that is not a prepared dataset
  const data::Tokenizer tokenizer = data::load_tokenizer(o.data_dir.string());

  const int64_t batch_tokens = o.train.batch_tokens > 0 ? o.train.batch_tokens : o.train.seq_len * o.train.micro_batch;
  DIFFTX_CHECK(batch_tokens > 0, "compare: --seq-len and --micro-batch must be positive");
  const int64_t steps = (o.tokens + batch_tokens - 1) / batch_tokens;
  int64_t fewest = configs.front().total_parameters(), most = fewest;
  for (const model::ModelConfig& c : configs) {
    fewest = std::min(fewest, c.total_parameters());
    most = std::max(most, c.total_parameters());
  }
  char line[256];
  std::snprintf(line, sizeof line, "compare: %zu models of preset %s, %lld steps of %lld tokens each, parameters %.3fM to %.3fM (%+.1f%%)",
                configs.size(), o.preset.c_str(), (long long)steps, (long long)batch_tokens, fewest / 1e6, most / 1e6,
                100.0 * (most - fewest) / fewest);
  log(line);

  results::ExperimentResults results;
  results.created = utc_now();
  results.setup = compare_setup(o, steps, batch_tokens, tokenizer);
  results.setup.seeds = o.seeds;
  const fs::path results_path = o.out_dir / "results.json";
  fs::create_directories(o.out_dir);
  const std::vector<int64_t> seeds = o.seeds.empty() ? std::vector<int64_t>{static_cast<int64_t>(o.train.seed)} : o.seeds;
  const size_t total = seeds.size() * configs.size();
  const std::vector<results::ModelResults> earlier = earlier_results(results_path);
  std::map<std::pair<std::string, int64_t>, fs::path> inits;  // every one found before any training
  if (!o.init_from.empty()) {
    for (int64_t seed : seeds)
      for (const std::string& name : o.variants) inits[{name, seed}] = init_checkpoint(o, name, seed);
    log("each run starts from the same variant and seed's last checkpoint in " + o.init_from.string());
  }
  for (int64_t seed : seeds)
    for (size_t i = 0; i < configs.size(); ++i) {
      const std::string& name = o.variants[i];
      const std::string which = o.seeds.empty() ? name : name + ", seed " + std::to_string(seed);
      std::snprintf(line, sizeof line, "\n== %s (%zu of %zu): %s, %.2fM parameters", which.c_str(),
                    results.models.size() + 1, total, (o.configs_dir / o.preset / (name + ".json")).c_str(),
                    configs[i].total_parameters() / 1e6);
      log(line);
      if (auto done = finished_before(earlier, name, seed, run_dir(o, name, seed), steps)) {
        log("finished in an earlier pass: its results are kept");
        results.models.push_back(std::move(*done));
        continue;
      }
      results.models.push_back(train_and_analyse(o, name, seed, steps, batch_tokens, tokenizer, inits[{name, seed}], log));
      io::write_json_file(results_path, results::to_json(results));  // after every model: a stopped compare shows what it has
    }
  io::write_json_file(results_path, results::to_json(results));
  report::write_report(results_path, o.out_dir);
  return results;
}

}  // namespace difftx::experiment
