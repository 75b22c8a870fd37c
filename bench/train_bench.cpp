// `difftx bench train`: one full training step (forward, backward, AdamW) per variant of a
// preset, with the in-run sgemm rate and the PyTorch CPU peer on the same shapes.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "benches.h"
#include "core/error.h"
#include "core/rng.h"
#include "kernels/gemm.h"
#include "measure.h"
#include "model/decoder.h"
#include "train/optimizer.h"

namespace difftx::bench {
namespace {

namespace fs = std::filesystem;

struct StepResult {
  double ms, tok_s, gflops, mfu;
};

StepResult time_training_step(const ModelConfig& config, int64_t B, int64_t T, double sgemm) {
  Model model(config);
  init_parameters(config, model.table, model.weights.data(), 1);
  AdamW optimizer(model.table, AdamWConfig{});
  Activations acts(config, B, T);
  Buffer<float> grads(model.table.total_floats());
  ModelTensors g = bind_tensors(config, model.table, grads.data());
  std::vector<int32_t> inputs(B * T), targets(B * T);
  Rng rng(2);
  for (auto& t : inputs) t = static_cast<int32_t>(rng.below(config.vocab_size));
  for (auto& t : targets) t = static_cast<int32_t>(rng.below(config.vocab_size));
  const Timing t = measure(
      [&] {
        grads.zero();
        decoder_forward_backward(model, acts, inputs.data(), targets.data(), g);
        optimizer.step(model.weights.data(), grads.data(), 1e-4, optimizer.gradient_norm(grads.data()));
      },
      2.0, 3);
  const double flops = 3.0 * config.forward_flops(B, T);
  const double gflops = flops / (t.median_ms * 1e-3) / 1e9;
  return {t.median_ms, B * T / (t.median_ms * 1e-3), gflops, gflops / sgemm};
}

// Runs the PyTorch peer and returns its best tokens/s (0 when torch is not installed).
double torch_peer_tok_s(const fs::path& config, int64_t B, int64_t T, bool json) {
  const fs::path script = fs::path(DIFFTX_SOURCE_DIR) / "bench/torch_peer.py";
  const std::string command = "/usr/bin/python3 " + script.string() + " --config " + config.string() +
                              " --seq-len " + std::to_string(T) + " --micro-batch " + std::to_string(B) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return 0;
  char line[4096];
  double best = 0;
  while (fgets(line, sizeof line, pipe)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("op")) {
      if (!json) std::printf("  torch peer: %s", line);
      continue;
    }
    if (j["op"] == "torch_best") {
      best = j["tok_s"].get<double>();
      if (!json)
        std::printf("  PyTorch %s peer (OpenBLAS %s, %d thread(s)): %.0f tok/s\n", j["torch"].get<std::string>().c_str(),
                    j["blas"].get<std::string>().c_str(), j["threads"].get<int>(), best);
    }
  }
  pclose(pipe);
  return best;
}

}  // namespace

int bench_train(cli::Args& args) {
  const bool json = args.flag("json");
  const std::string preset = args.get("preset", "small");
  const int64_t T = args.get_int("seq-len", 512);
  const int64_t B = args.get_int("micro-batch", 8);
  const bool with_torch = !args.flag("no-torch");
  args.finish();

  const double sgemm = measure_sgemm_gflops(1024, 1.0);
  print_row(json, {str("op", "gemm"), num("M", 1024, 0), num("gflops", sgemm, 1), str("kernel", gemm_kernel_name())});
  std::map<std::string, double> ms;
  for (const char* variant : {"baseline", "diff", "diff2"}) {
    const fs::path config_path = fs::path(DIFFTX_SOURCE_DIR) / "configs" / preset / (std::string(variant) + ".json");
    const ModelConfig config = config_from_file(config_path.string());
    const StepResult r = time_training_step(config, B, T, sgemm);
    ms[variant] = r.ms;
    const double peer = with_torch ? torch_peer_tok_s(config_path, B, T, json) : 0.0;
    print_row(json, {str("op", "train_step"), str("variant", variant), str("preset", preset), num("T", T, 0),
                     num("B", B, 0), num("params_m", config.total_parameters() / 1e6, 2), num("ms", r.ms, 1),
                     num("tok_s", r.tok_s, 0), num("gflops", r.gflops, 1), num("mfu_vs_sgemm", r.mfu, 3),
                     num("torch_tok_s", peer, 0), num("vs_torch", peer > 0 ? r.tok_s / peer : 0.0, 2)});
  }
  print_row(json, {str("op", "ratio"), str("what", "diff_step_over_baseline"), num("value", ms["diff"] / ms["baseline"], 3)});
  print_row(json, {str("op", "ratio"), str("what", "diff2_step_over_baseline"), num("value", ms["diff2"] / ms["baseline"], 3)});
  return 0;
}

}  // namespace difftx::bench
