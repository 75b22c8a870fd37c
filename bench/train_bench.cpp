// `difftx bench train`: one full training step (forward, backward, AdamW) per variant of a
// preset, with the in-run sgemm rate and the PyTorch CPU peer (bench/torch_peer.py) on the same
// model and shapes. The variants alternate over rounds and each keeps its best step, as does
// sgemm, so a burst of outside load spoils one round of one variant rather than a ratio.
// FLOPs as docs/SPEC.md §4: 3 x forward, the forward being 2 x non-embedding parameters (the LM head
// counted, tied or not) plus causal attention over the unmasked scores.
#include <algorithm>
#include "source_dir.h"
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "benches.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/threading.h"
#include "core/timer.h"
#include "kernels/gemm.h"
#include "measure.h"
#include "model/decoder.h"
#include "train/optimizer.h"

namespace difftx::bench {
namespace {

namespace fs = std::filesystem;

// One variant's model, optimizer, activations and batch, and the steps timed so far.
struct Trainee {
  Trainee(std::string name_, fs::path config_path_, int64_t B, int64_t T)
      : name(std::move(name_)),
        config_path(std::move(config_path_)),
        model(model::config_from_file(config_path.string())),
        optimizer(*model.backend, model.table, train::AdamWConfig{}),
        acts(model.config, B, T, model::ActivationUse::training, *model.backend),
        grads(model.backend->allocate(model.table.total_floats() * int64_t{sizeof(float)})),
        g(model::bind_tensors(model.config, model.table, grads.as<float>())),
        inputs(B * T),
        targets(B * T) {
    model::init_parameters(model.config, model.table, model.host_weights(), 1);
    Rng rng(2);
    for (auto& t : inputs) t = static_cast<int32_t>(rng.below(model.config.vocab_size));
    for (auto& t : targets) t = static_cast<int32_t>(rng.below(model.config.vocab_size));
    acts.profile = &profile;
  }

  // One training step as the trainer runs it; keeps the time (and its phases) when it is the best.
  void step() {
    profile.clear();
    const double cpu0 = process_cpu_seconds();
    Timer t;
    model::PhaseClock clock(&profile);
    model.backend->zero(grads.as<void>(), grads.bytes());
    clock.lap(model::StepPhase::optimizer);
    model::decoder_forward_backward(model, acts, inputs.data(), targets.data(), g);
    clock = model::PhaseClock(&profile);  // the decoder laps its own phases
    optimizer.step(model.weights.as<float>(), grads.as<const float>(), 1e-4,
                   optimizer.gradient_norm(grads.as<const float>()));
    clock.lap(model::StepPhase::optimizer);
    const double ms = t.ms();
    times_ms.push_back(ms);
    cpu_ms.push_back((process_cpu_seconds() - cpu0) * 1e3);
    if (ms <= *std::min_element(times_ms.begin(), times_ms.end())) best_profile = profile;
    for (size_t p = 0; p < profile.seconds.size(); ++p)
      phase_min.seconds[p] = times_ms.size() == 1 ? profile.seconds[p] : std::min(phase_min.seconds[p], profile.seconds[p]);
  }

  double best_ms() const { return *std::min_element(times_ms.begin(), times_ms.end()); }
  double median_ms() const {
    std::vector<double> sorted = times_ms;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }

  std::string name;
  fs::path config_path;
  model::Model model;
  train::AdamW optimizer;
  model::Activations acts;
  backends::DeviceBuffer grads;
  model::ModelTensors g;
  std::vector<int32_t> inputs, targets;
  model::StepProfile profile, best_profile, phase_min;  // this step, the best step, each phase's best
  std::vector<double> times_ms, cpu_ms;  // per timed step: wall and process CPU time
};

struct PeerResult {
  double tok_s = 0;
  double cpu_ms = 0;   // process CPU time of its best step at that thread count
  std::string config;  // how the peer ran (torch version, BLAS kernels, threads, allocator)
};

// s as one word for /bin/sh.
std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs the PyTorch peer once for every variant; returns its best tokens/s per config file
// (empty when torch is not installed or the peer fails; its messages are passed on).
std::map<std::string, PeerResult> run_torch_peer(const std::vector<std::unique_ptr<Trainee>>& trainees, int64_t B,
                                                 int64_t T, const std::string& threads, bool quick, bool json) {
  const fs::path script = fs::path(DIFFTX_SOURCE_DIR) / "bench/torch_peer.py";
  std::string configs;
  for (const auto& t : trainees) {
    if (!configs.empty()) configs += ',';
    configs += t->config_path.string();
  }
  const std::string command = "/usr/bin/python3 " + shell_quoted(script.string()) + " --configs " +
                              shell_quoted(configs) + " --seq-len " + std::to_string(T) + " --micro-batch " +
                              std::to_string(B) + " --threads " + shell_quoted(threads) + (quick ? " --quick" : "") +
                              " 2>&1";
  std::map<std::string, PeerResult> best;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return best;
  char line[4096];
  while (fgets(line, sizeof line, pipe)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("op")) {
      std::fprintf(stderr, "  torch peer: %s", line);
      continue;
    }
    if (j["op"] == "torch_best")
      best[j["config"].get<std::string>()] = {j["tok_s"].get<double>(), j["cpu_ms"].get<double>(),
                                              j["setup"].get<std::string>()};
    else if (!json && j["op"] == "torch_train_step")
      std::printf("  torch peer %s, %d thread(s): %.0f ms/step, %.0f tok/s\n", j["variant"].get<std::string>().c_str(),
                  j["threads"].get<int>(), j["ms"].get<double>(), j["tok_s"].get<double>());
  }
  pclose(pipe);
  return best;
}

}  // namespace

int bench_train(cli::Args& args) {
  const bool json = args.flag("json");
  const bool quick = args.flag("quick");
  const bool profile = args.flag("profile");
  const bool with_torch = !args.flag("no-torch");
  const std::string torch_threads = args.get("torch-threads", "1,2");
  const std::string preset = args.get("preset", "small");
  const int64_t T = args.get_int("seq-len", 512, cli::kSequenceLength);
  DIFFTX_CHECK(T > 0, "bench train: --seq-len must be positive, got ", T);
  const int64_t B = args.get_int("micro-batch", std::max<int64_t>(1, 4096 / T), cli::kMicroBatch);  // 4096 tokens a step
  const int64_t rounds = args.get_int("rounds", quick ? 2 : 5, cli::kPositive);
  std::vector<std::string> variants;
  {
    std::stringstream list(args.get("variants", "baseline,diff,diff2"));
    for (std::string v; std::getline(list, v, ',');) variants.push_back(v);
  }
  args.finish();
  DIFFTX_CHECK(B > 0, "bench train: --micro-batch must be positive, got ", B);
  DIFFTX_CHECK(rounds > 0, "bench train: --rounds must be positive, got ", rounds);

  std::vector<std::unique_ptr<Trainee>> trainees;
  for (const std::string& v : variants) {
    const fs::path path = fs::path(DIFFTX_SOURCE_DIR) / "configs" / preset / (v + ".json");
    DIFFTX_CHECK(fs::exists(path), "bench train: no config ", path.string(), " (preset '", preset, "', variant '", v,
                 "')");
    trainees.push_back(std::make_unique<Trainee>(v, path, B, T));
    DIFFTX_CHECK(T <= trainees.back()->model.config.max_position_embeddings, "bench train: --seq-len ", T,
                 " exceeds max_position_embeddings of ", path.string());
  }

  double sgemm = kernels::measure_sgemm_gflops(1024, 0.5);
  for (auto& t : trainees) {  // warm-up: first-touch page faults, thread pools, scratch growth
    t->step();
    t->times_ms.clear();
    t->cpu_ms.clear();
  }
  for (int64_t r = 0; r < rounds; ++r) {
    for (auto& t : trainees) t->step();
    sgemm = std::max(sgemm, kernels::measure_sgemm_gflops(1024, 0.05));
  }
  print_row(json, {str("op", "gemm"), num("M", 1024, 0), num("gflops", sgemm, 1),
                   str("kernel", kernels::gemm_kernel_name()), num("threads", thread_count(), 0)});

  const auto peer = with_torch ? run_torch_peer(trainees, B, T, torch_threads, quick, json) : std::map<std::string, PeerResult>{};
  std::map<std::string, double> best_ms;
  for (const auto& t : trainees) {
    const model::ModelConfig& config = t->model.config;
    const double ms = t->best_ms(), tok_s = B * T / (ms * 1e-3);
    const double gflops = 3.0 * config.forward_flops(B, T) / (ms * 1e-3) / 1e9;
    const auto it = peer.find(t->config_path.string());
    const double peer_tok_s = it == peer.end() ? 0.0 : it->second.tok_s;
    best_ms[t->name] = ms;
    print_row(json, {str("op", "train_step"), str("variant", t->name), str("preset", preset), num("T", T, 0),
                     num("B", B, 0), num("params_m", config.total_parameters() / 1e6, 2), num("ms", ms, 1),
                     num("median_ms", t->median_ms(), 1),
                     num("cpu_ms", *std::min_element(t->cpu_ms.begin(), t->cpu_ms.end()), 1),
                     num("tok_s", tok_s, 0), num("gflops", gflops, 1),
                     num("mfu_vs_sgemm", gflops / sgemm, 3), num("torch_tok_s", peer_tok_s, 0),
                     num("vs_torch", peer_tok_s > 0 ? tok_s / peer_tok_s : 0.0, 2),
                     num("torch_cpu_ms", it == peer.end() ? 0.0 : it->second.cpu_ms, 1),
                     str("torch_setup", it == peer.end() ? "none" : it->second.config)});
    if (!profile) continue;
    for (int p = 0; p < static_cast<int>(model::StepPhase::count); ++p) {
      const model::StepPhase phase = static_cast<model::StepPhase>(p);
      const double phase_ms = t->best_profile[phase] * 1e3;
      print_row(json, {str("op", "train_phase"), str("variant", t->name), str("phase", model::step_phase_name(phase)),
                       num("ms", phase_ms, 1), num("share", phase_ms / ms, 3),
                       num("min_ms", t->phase_min[phase] * 1e3, 1)});
    }
  }
  for (const char* v : {"diff", "diff2"})
    if (best_ms.count(v) && best_ms.count("baseline"))
      print_row(json, {str("op", "ratio"), str("what", std::string(v) + "_step_over_baseline"),
                       num("value", best_ms[v] / best_ms["baseline"], 3)});
  return 0;
}

}  // namespace difftx::bench
