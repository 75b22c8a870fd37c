#include "train/trainer.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/timer.h"
#include "data/loader.h"
#include "eval/retrieval/task_mixture.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "kernels/gemm.h"
#include "model/decoder.h"
#include "model/model_io.h"
#include "train/checkpoint.h"

namespace difftx {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string format_duration(double seconds) {
  char buf[32];
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
  else std::snprintf(buf, sizeof buf, "%llds", (long long)s);
  return buf;
}

// metrics.jsonl without the lines of steps after `last_step` (those of a run that was cut
// off after its last checkpoint), so a resumed run's log reads as one uninterrupted run.
void truncate_metrics(const fs::path& path, int64_t last_step) {
  if (!fs::exists(path)) return;
  std::istringstream in(read_whole_file(path));
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.contains("step") && j["step"].get<int64_t>() <= last_step) kept += line + "\n";
  }
  write_file_atomically(path, kept);
}

json options_to_json(const TrainOptions& o) {
  json j{{"config", o.config_path}, {"data", o.data_dir}, {"steps", o.steps}, {"seq_len", o.seq_len},
         {"micro_batch", o.micro_batch}, {"batch_tokens", o.batch_tokens}, {"lr", o.lr},
         {"min_lr_ratio", o.min_lr_ratio}, {"warmup_steps", o.warmup_steps},
         {"beta1", o.adamw.beta1}, {"beta2", o.adamw.beta2}, {"eps", o.adamw.eps},
         {"weight_decay", o.adamw.weight_decay}, {"grad_clip", o.adamw.grad_clip}, {"seed", o.seed}};
  if (!o.mixture.empty()) j["mix"] = retrieval::mixture_to_json(o.mixture);  // absent without one, as before
  return j;
}

}  // namespace

TrainSummary train(const TrainOptions& o) {
  DIFFTX_CHECK(o.steps > 0, "--steps must be positive");
  DIFFTX_CHECK(o.seq_len > 0 && o.micro_batch > 0, "--seq-len and --micro-batch must be positive");
  const int64_t micro_tokens = o.seq_len * o.micro_batch;
  const int64_t batch_tokens = o.batch_tokens > 0 ? o.batch_tokens : micro_tokens;
  DIFFTX_CHECK(batch_tokens % micro_tokens == 0, "--batch-tokens ", batch_tokens,
               " must be a multiple of --micro-batch x --seq-len = ", micro_tokens);
  const int64_t accumulation = batch_tokens / micro_tokens;

  Model model(config_from_file(o.config_path));
  const ModelConfig& config = model.config;
  DIFFTX_CHECK(o.seq_len <= config.max_position_embeddings, "--seq-len ", o.seq_len,
               " exceeds max_position_embeddings ", config.max_position_embeddings, " of ", o.config_path);
  DIFFTX_CHECK(fs::is_directory(o.data_dir), o.data_dir, ": data directory does not exist (make one with difftx prepare)");
  data::TokenLoader train_data(o.data_dir, "train", o.micro_batch, o.seq_len, o.seed, 0, 1);
  data::TokenLoader val_data(o.data_dir, "val", o.micro_batch, o.seq_len, o.seed, 0, 1);
  DIFFTX_CHECK(train_data.vocab_size() <= config.vocab_size, o.data_dir, ": the data's vocabulary has ",
               train_data.vocab_size(), " tokens but ", o.config_path, " has vocab_size ", config.vocab_size);

  std::optional<retrieval::TaskMixture> mixture;
  if (!o.mixture.empty()) mixture.emplace(o.mixture, o.data_dir, o.seq_len, o.seed);

  init_parameters(config, model.table, model.weights.data(), o.seed);
  AdamW optimizer(model.table, o.adamw);
  const LrSchedule schedule{o.lr, o.lr * o.min_lr_ratio, o.warmup_steps, o.steps, o.schedule};

  const fs::path run_dir = o.out_dir;
  fs::create_directories(run_dir);
  const fs::path metrics_path = run_dir / "metrics.jsonl";
  int64_t start_step = 0;
  const auto latest = latest_checkpoint(run_dir);
  if (o.resume && latest) {
    const json state = load_checkpoint(*latest, model, optimizer);
    start_step = state.at("step").get<int64_t>();
    // Changed options are allowed (a lower --lr after a divergence, more --steps), but the
    // run is then no longer the uninterrupted run's twin, so say so.
    const json before = state.at("options"), now = options_to_json(o);
    for (const auto& [key, value] : now.items())
      if (!o.quiet && before.value(key, json()) != value)
        std::printf("note: resuming with %s = %s (the checkpoint's run used %s)\n", key.c_str(), value.dump().c_str(),
                    before.value(key, json()).dump().c_str());
    train_data.restore(state.at("train_data"));
    truncate_metrics(metrics_path, start_step);
    if (!o.quiet) std::printf("resumed from %s (step %lld)\n", latest->string().c_str(), (long long)start_step);
  } else {
    DIFFTX_CHECK(!latest, run_dir.string(), " already holds checkpoints: pass --resume to continue that run, or choose another --out");
    write_file_atomically(metrics_path, "");
  }
  write_json_file(run_dir / "run.json", json{{"options", options_to_json(o)}, {"model", config_to_json(config)},
                                             {"parameters", config.total_parameters()}});

  // The data's tokenizer travels with every checkpoint, so each is a complete model directory.
  std::vector<fs::path> tokenizer_files;
  for (const auto& e : fs::directory_iterator(o.data_dir))
    if (e.is_regular_file() && e.path().filename().string().rfind("tokenizer.", 0) == 0)
      tokenizer_files.push_back(e.path());
  Activations acts(config, o.micro_batch, o.seq_len);
  Buffer<float> grads(model.table.total_floats());
  ModelTensors g = bind_tensors(config, model.table, grads.data());
  std::vector<int32_t> inputs(micro_tokens), targets(micro_tokens);
  std::ofstream metrics(metrics_path, std::ios::app);

  const double sgemm_gflops = measure_sgemm_gflops();
  const double step_flops = 3.0 * config.forward_flops(o.micro_batch, o.seq_len) * accumulation;
  if (!o.quiet)
    std::printf("model %s: %.2fM parameters, %lld tokens/step (%lld x %lld x %lld), sgemm %.0f GFLOPS\n",
                attention_kind_name(config.attention), config.total_parameters() / 1e6, (long long)batch_tokens,
                (long long)accumulation, (long long)o.micro_batch, (long long)o.seq_len, sgemm_gflops);
  if (!o.quiet && mixture) std::printf("%s\n", mixture->describe().c_str());

  auto evaluate = [&] {
    val_data.rewind();
    LossSum total;
    for (int64_t b = 0; b < o.eval_batches && val_data.next(inputs.data(), targets.data()) > 0; ++b) {
      const LossSum s = decoder_loss(model, acts, inputs.data(), targets.data());
      total.sum += s.sum;
      total.count += s.count;
    }
    return total.count ? total.sum / total.count : std::numeric_limits<double>::quiet_NaN();
  };
  auto checkpoint = [&](int64_t step) {
    save_checkpoint(run_dir, step, model, optimizer,
                    json{{"options", options_to_json(o)}, {"train_data", train_data.state()}}, tokenizer_files,
                    o.keep_checkpoints);
  };

  TrainSummary summary;
  summary.last_val_loss = std::numeric_limits<double>::quiet_NaN();
  Timer run_timer;
  double train_seconds = 0;
  for (int64_t step = start_step + 1; step <= o.steps; ++step) {
    Timer step_timer;
    grads.zero();
    double loss = 0;
    for (int64_t micro = 0; micro < accumulation; ++micro) {
      train_data.next(inputs.data(), targets.data());
      // Rows of the step's batch are numbered across its micro-batches (task_mixture.h).
      if (mixture) mixture->apply(step - 1, micro * o.micro_batch, o.micro_batch, inputs.data(), targets.data());
      loss += decoder_forward_backward(model, acts, inputs.data(), targets.data(), g, 1.0f / accumulation) / accumulation;
    }
    const double norm = optimizer.gradient_norm(grads.data());
    DIFFTX_CHECK(std::isfinite(loss) && std::isfinite(norm), "step ", step, ": loss ", loss, ", gradient norm ", norm,
                 " is not finite; stopping (the last checkpoint in ", (run_dir / "checkpoints").string(),
                 " is intact; try a lower --lr)");
    const double lr = schedule.at(step);
    optimizer.step(model.weights.data(), grads.data(), lr, norm);
    const double seconds = step_timer.seconds();
    train_seconds += seconds;
    summary.steps_done = step;
    summary.last_train_loss = loss;
    const double tok_s = batch_tokens / seconds;
    const double mfu = step_flops / seconds / 1e9 / sgemm_gflops;

    metrics << json{{"step", step}, {"loss", loss}, {"lr", lr}, {"grad_norm", norm}, {"tok_s", tok_s},
                    {"mfu", mfu}, {"ms", seconds * 1e3}}.dump() << "\n" << std::flush;
    if (!o.quiet && (step % o.log_every == 0 || step == o.steps)) {
      const double eta = run_timer.seconds() / (step - start_step) * (o.steps - step);
      std::printf("step %5lld/%lld | loss %.4f | lr %.2e | gnorm %.3f | %.0f tok/s | MFU %.1f%% | ETA %s\n",
                  (long long)step, (long long)o.steps, loss, lr, norm, tok_s, 100 * mfu, format_duration(eta).c_str());
      std::fflush(stdout);
    }
    if ((o.eval_every > 0 && step % o.eval_every == 0) || step == o.steps) {
      summary.last_val_loss = evaluate();
      metrics << json{{"step", step}, {"val_loss", summary.last_val_loss}}.dump() << "\n" << std::flush;
      if (!o.quiet) std::printf("step %5lld | val loss %.4f\n", (long long)step, summary.last_val_loss);
    }
    if ((o.checkpoint_every > 0 && step % o.checkpoint_every == 0) || step == o.steps) checkpoint(step);
  }
  const int64_t ran = summary.steps_done - start_step;
  if (ran > 0) {
    summary.tokens_per_second = ran * batch_tokens / train_seconds;
    summary.mfu = ran * step_flops / train_seconds / 1e9 / sgemm_gflops;
  }
  return summary;
}

}  // namespace difftx
