#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/checked.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/threading.h"
#include "core/timer.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/sha256.h"
#include "dist/consistency.h"
#include "dist/text_collectives.h"
#include "dist/timed_communicator.h"
#include "data/tasks/task_mixture.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "kernels/gemm.h"
#include "model/decoder.h"
#include "model/model_io.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/metrics_log.h"
#include "train/run_lock.h"

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

json options_to_json(const TrainOptions& o) {
  json j{{"config", o.config_path}, {"data", o.data_dir}, {"steps", o.steps}, {"seq_len", o.seq_len},
         {"micro_batch", o.micro_batch}, {"batch_tokens", o.batch_tokens}, {"lr", o.lr},
         {"min_lr_ratio", o.min_lr_ratio}, {"warmup_steps", o.warmup_steps},
         {"beta1", o.adamw.beta1}, {"beta2", o.adamw.beta2}, {"eps", o.adamw.eps},
         {"weight_decay", o.adamw.weight_decay}, {"grad_clip", o.adamw.grad_clip}, {"seed", o.seed}};
  if (!o.mixture.empty()) j["mix"] = retrieval::mixture_to_json(o.mixture);  // absent without one, as before
  return j;
}

// What every rank must agree on (paths may differ between hosts; the files must not).
json inputs_that_must_match(const TrainOptions& o, const ModelConfig& config,
                            const std::vector<fs::path>& tokenizer_files) {
  json options = options_to_json(o);
  options.erase("config");
  options.erase("data");
  options.update(json{{"schedule", static_cast<int>(o.schedule)}, {"eval_every", o.eval_every},
                      {"eval_batches", o.eval_batches}, {"checkpoint_every", o.checkpoint_every},
                      {"resume", o.resume}, {"bucket_floats", o.bucket_floats}, {"check_replicas", o.check_replicas}});
  // The data's metadata records every shard's token count and the sources' sha256.
  json data = {{"metadata.json", data::sha256_hex(read_whole_file(fs::path(o.data_dir) / data::kMetadataFile))}};
  for (const fs::path& f : tokenizer_files) data[f.filename().string()] = data::sha256_hex(read_whole_file(f));
  return json{{"model config", config_to_json(config)}, {"options", options}, {"data", data}};
}

// Starts or resumes a run: rank 0 alone reads the run directory (and checks it), and the
// other ranks get rank 0's weights (also when starting: initialisation computed with another
// host's libm could differ in the last bit) and, when resuming, the optimizer's moments.
// Returns the resumed checkpoint's state.json, or an empty object.
json start_or_resume(const TrainOptions& o, dist::Communicator& comm, DataParallel& parallel, Model& model,
                     AdamW& optimizer) {
  const fs::path run_dir = o.out_dir;
  Buffer<float> m_scratch, v_scratch;
  OptimizerMoments moments{parallel.moment_arena(optimizer.first_moment().data(), m_scratch),
                           parallel.moment_arena(optimizer.second_moment().data(), v_scratch)};
  std::string state_text;
  if (comm.rank() == 0) {
    const auto latest = latest_checkpoint(run_dir);
    if (o.resume && latest) {
      json state = load_checkpoint(*latest, model, moments);
      state["optimizer_steps_taken"] = moments.steps_taken;
      state_text = state.dump();
      if (!o.quiet)
        std::printf("resumed from %s (step %lld)\n", latest->string().c_str(),
                    (long long)state.at("step").get<int64_t>());
    } else {
      DIFFTX_CHECK(!latest, run_dir.string(),
                   " already holds checkpoints: pass --resume to continue that run, or choose another --out");
      write_file_atomically(run_dir / "metrics.jsonl", "");
    }
  }
  state_text = dist::broadcast_text(comm, state_text, 0);
  parallel.broadcast(model.weights.data(), 0);
  if (state_text.empty()) return json::object();
  parallel.scatter_moments(moments.m, optimizer.first_moment().data(), 0);
  parallel.scatter_moments(moments.v, optimizer.second_moment().data(), 0);
  json state = parse_json_text(state_text, "the resumed state");
  optimizer.set_steps_taken(state.at("optimizer_steps_taken").get<int64_t>());
  return state;
}

// Changed options are allowed when resuming (a lower --lr after a divergence, more --steps,
// another number of ranks), but the run is then no longer the uninterrupted run's twin, so say so.
void note_changes(const json& state, const TrainOptions& o, int ranks, int64_t batch_rows) {
  const json before = state.at("options"), now = options_to_json(o);
  for (const auto& [key, value] : now.items())
    if (before.value(key, json()) != value)
      std::printf("note: resuming with %s = %s (the checkpoint's run used %s)\n", key.c_str(), value.dump().c_str(),
                  before.value(key, json()).dump().c_str());
  if (state.value("world_size", 1) != ranks)
    std::printf("note: resuming on %d rank%s (the checkpoint's run used %d)\n", ranks, ranks == 1 ? "" : "s",
                state.value("world_size", 1));
  if (state.value("batch_rows", batch_rows) != batch_rows)
    std::printf("note: the global batch changes from %lld to %lld rows, so the data order differs from the "
                "checkpoint's run\n", (long long)state.value("batch_rows", batch_rows), (long long)batch_rows);
}

// An order-free digest of a batch's rows: equal for two runs exactly when they trained on the
// same windows in each step, however the rows were split into ranks and micro-batches.
uint64_t rows_digest(const int32_t* inputs, const int32_t* targets, int64_t rows, int64_t T) {
  const size_t bytes = sizeof(int32_t) * T;
  uint64_t sum = 0;
  for (int64_t r = 0; r < rows; ++r) sum += hash64(targets + r * T, bytes, hash64(inputs + r * T, bytes));
  return sum;
}

// Options that no single option's range covers (each option's own range is checked where it
// is read: cli/train_options.cpp); train() is also called from code, so it checks them again.
void check_train_options(const TrainOptions& o) {
  DIFFTX_CHECK(o.steps > 0, "--steps must be positive");
  DIFFTX_CHECK(o.seq_len > 0 && o.micro_batch > 0, "--seq-len and --micro-batch must be positive");
  DIFFTX_CHECK(product_at_most({o.seq_len, o.micro_batch}, kMaxStepTokens).has_value(), "--micro-batch ",
               o.micro_batch, " x --seq-len ", o.seq_len, " exceeds the ", kMaxStepTokens,
               " tokens one micro-batch may hold");
  DIFFTX_CHECK(o.batch_tokens >= 0, "--batch-tokens must not be negative");
  DIFFTX_CHECK(o.eval_batches >= 0 && o.eval_every >= 0 && o.checkpoint_every >= 0 && o.warmup_steps >= 0,
               "--eval-batches, --eval-every, --checkpoint-every and --warmup must not be negative");
  DIFFTX_CHECK(o.log_every > 0, "--log-every must be positive");
  DIFFTX_CHECK(o.keep_checkpoints >= 1, "--keep-checkpoints must be at least 1");
  DIFFTX_CHECK(std::isfinite(o.lr) && o.lr > 0, "--lr must be a positive finite number, got ", o.lr);
  DIFFTX_CHECK(o.min_lr_ratio >= 0 && o.min_lr_ratio <= 1, "--min-lr-ratio must lie in [0, 1], got ", o.min_lr_ratio);
  DIFFTX_CHECK(o.bucket_floats > 0, "--bucket-mb must be positive");
}

void report_dropped_metrics(const DroppedMetrics& dropped, const fs::path& path, int64_t step) {
  if (dropped.lines > 0)
    std::printf("note: dropped %lld lines of %s after step %lld (written after the checkpoint this run resumes "
                "from; the resumed run writes them again)\n",
                (long long)dropped.lines, path.string().c_str(), (long long)step);
  if (dropped.unreadable > 0)
    std::printf("note: dropped %lld unreadable lines of %s (a line torn by a crash)\n", (long long)dropped.unreadable,
                path.string().c_str());
}

std::string hex64(uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

}  // namespace

TrainSummary train(const TrainOptions& o, dist::Communicator& outer_comm) {
  dist::TimedCommunicator comm(outer_comm);
  const int ranks = comm.size(), rank = comm.rank();
  const bool leader = rank == 0, talk = leader && !o.quiet;
  check_train_options(o);
  const int64_t micro_tokens = *product_at_most({o.seq_len, o.micro_batch}, kMaxStepTokens);
  const int64_t batch_tokens = o.batch_tokens > 0 ? o.batch_tokens : micro_tokens * ranks;
  DIFFTX_CHECK(batch_tokens / ranks <= kMaxStepTokens, "--batch-tokens ", batch_tokens, " over ", ranks,
               " rank(s) exceeds the ", kMaxStepTokens, " tokens a rank can hold for one step");
  DIFFTX_CHECK(batch_tokens % (micro_tokens * ranks) == 0, "--batch-tokens ", batch_tokens,
               " must be a multiple of ranks x --micro-batch x --seq-len = ", ranks, " x ", o.micro_batch, " x ",
               o.seq_len);
  const int64_t accumulation = batch_tokens / (micro_tokens * ranks);
  const int64_t batch_rows = batch_tokens / o.seq_len;  // of the global batch

  const ModelConfig config = config_from_file(o.config_path);
  DataParallel parallel(comm, ParameterTable(config).total_floats(), o.bucket_floats);
  Model model(config, parallel.padded_floats());
  DIFFTX_CHECK(o.seq_len <= config.max_position_embeddings, "--seq-len ", o.seq_len,
               " exceeds max_position_embeddings ", config.max_position_embeddings, " of ", o.config_path);
  DIFFTX_CHECK(fs::is_directory(o.data_dir), o.data_dir,
               ": data directory does not exist (make one with difftx prepare)");
  data::TokenLoader train_data(o.data_dir, "train",
                               {.batch = o.micro_batch, .seq_len = o.seq_len, .seed = o.seed, .rank = rank,
                                .world_size = ranks, .micro_batches = accumulation});
  // Validation reads the split's first eval_batches x micro_batch x ranks windows, shared
  // among the ranks: the same windows for 2 ranks x B rows as for 1 rank x 2B.
  data::TokenLoader val_data(o.data_dir, "val",
                             {.batch = o.micro_batch, .seq_len = o.seq_len, .rank = rank, .world_size = ranks,
                              .max_windows = std::max<int64_t>(o.eval_batches, 1) * o.micro_batch * ranks});
  data::check_fits_vocabulary(train_data.dataset(), config.vocab_size, o.config_path);
  if (talk && train_data.vocab_size() < config.vocab_size)
    std::printf("note: %s has vocab_size %lld but the data's tokenizer has %lld tokens: %lld embedding rows will "
                "never see a token (set vocab_size to %lld to size the model from the data)\n",
                o.config_path.c_str(), (long long)config.vocab_size, (long long)train_data.vocab_size(),
                (long long)(config.vocab_size - train_data.vocab_size()), (long long)train_data.vocab_size());
  std::optional<retrieval::TaskMixture> mixture;
  if (!o.mixture.empty()) mixture.emplace(o.mixture, o.data_dir, o.seq_len, o.seed);
  // The data's tokenizer travels with every checkpoint, so each is a complete model directory
  // (generate and eval need it): data without one is refused before anything is trained.
  const std::vector<fs::path> tokenizer_files = data::tokenizer_files(o.data_dir);
  dist::require_same_inputs(comm, inputs_that_must_match(o, config, tokenizer_files));

  init_parameters(config, model.table, model.weights.data(), o.seed);
  AdamW optimizer(model.table, o.adamw, parallel.owned_pieces());
  const LrSchedule schedule{o.lr, o.lr * o.min_lr_ratio, o.warmup_steps, o.steps, o.schedule};

  const fs::path run_dir = o.out_dir;
  const fs::path metrics_path = run_dir / "metrics.jsonl";
  std::optional<RunDirectoryLock> lock;  // rank 0 alone writes the run directory
  if (leader) {
    fs::create_directories(run_dir);
    lock.emplace(run_dir);
  }
  const json resumed = start_or_resume(o, comm, parallel, model, optimizer);
  int64_t start_step = 0;
  if (!resumed.empty()) {
    start_step = resumed.at("step").get<int64_t>();
    DIFFTX_CHECK(o.steps >= start_step, "--steps ", o.steps, " is below the ", start_step,
                 " steps the resumed checkpoint has done (", run_dir.string(), ")");
    if (talk && o.steps == start_step)
      std::printf("note: the run has done its %lld steps already; nothing to train\n", (long long)o.steps);
    train_data.restore(resumed.at("train_data"));
    if (leader) report_dropped_metrics(truncate_metrics_after(metrics_path, start_step), metrics_path, start_step);
    if (talk) note_changes(resumed, o, ranks, batch_rows);
  }
  if (leader)
    write_json_file(run_dir / "run.json", json{{"options", options_to_json(o)}, {"model", config_to_json(config)},
                                               {"parameters", config.total_parameters()}, {"world_size", ranks},
                                               {"communicator", comm.description()}});

  Activations acts(config, o.micro_batch, o.seq_len);
  Buffer<float> grads(parallel.padded_floats());
  ModelTensors g = bind_tensors(config, model.table, grads.data());
  // The step's micro-batches, drawn before the first backward so that every micro-batch's
  // gradient can be weighted by its share of the global batch's counted targets.
  std::vector<int32_t> inputs(accumulation * micro_tokens), targets(inputs.size());
  std::vector<int64_t> counts(accumulation);
  std::optional<MetricsLog> metrics;
  if (leader) metrics.emplace(metrics_path);

  const double sgemm_gflops = measure_sgemm_gflops();
  const double step_flops = 3.0 * config.forward_flops(o.micro_batch, o.seq_len) * accumulation;  // per rank
  if (talk)
    std::printf("model %s: %.2fM parameters, %lld tokens/step (%d rank%s x %lld x %lld x %lld), sgemm %.0f GFLOPS, "
                "%d threads/rank%s%s\n",
                attention_kind_name(config.attention), config.total_parameters() / 1e6, (long long)batch_tokens, ranks,
                ranks == 1 ? "" : "s",
                (long long)accumulation, (long long)o.micro_batch, (long long)o.seq_len, sgemm_gflops, thread_count(),
                ranks > 1 ? ", " : "", ranks > 1 ? comm.description().c_str() : "");
  if (talk && mixture) std::printf("%s\n", mixture->describe().c_str());

  auto evaluate = [&] {
    if (o.eval_batches == 0) return std::numeric_limits<double>::quiet_NaN();
    val_data.rewind();
    double total[2] = {0, 0};  // summed loss, counted targets
    while (val_data.next(inputs.data(), targets.data()) > 0) {
      const LossSum s = decoder_loss(model, acts, inputs.data(), targets.data());
      total[0] += s.sum;
      total[1] += static_cast<double>(s.count);
    }
    comm.all_reduce_sum(total, 2);
    return total[1] > 0 ? total[0] / total[1] : std::numeric_limits<double>::quiet_NaN();
  };
  auto checkpoint = [&](int64_t step) {
    Buffer<float> m_scratch, v_scratch;
    OptimizerMoments moments{parallel.moment_arena(optimizer.first_moment().data(), m_scratch),
                             parallel.moment_arena(optimizer.second_moment().data(), v_scratch),
                             optimizer.steps_taken()};
    parallel.gather_moments(optimizer.first_moment().data(), moments.m);
    parallel.gather_moments(optimizer.second_moment().data(), moments.v);
    if (leader) metrics->sync();  // the log is durable up to the step the checkpoint will say
    if (leader)
      save_checkpoint(run_dir, step, model, moments,
                      json{{"options", options_to_json(o)}, {"train_data", train_data.state()}, {"world_size", ranks},
                           {"batch_rows", batch_rows}},
                      tokenizer_files, o.keep_checkpoints);
  };

  TrainSummary summary;
  summary.last_val_loss = std::numeric_limits<double>::quiet_NaN();
  Timer run_timer;
  double train_seconds = 0, comm_seconds = 0;
  comm.take_seconds();
  for (int64_t step = start_step + 1; step <= o.steps; ++step) {
    Timer step_timer;
    grads.zero();
    uint64_t batch[2] = {0, 0};  // counted targets, rows digest (summed over ranks)
    for (int64_t micro = 0; micro < accumulation; ++micro) {
      int32_t* in = inputs.data() + micro * micro_tokens;
      int32_t* tg = targets.data() + micro * micro_tokens;
      train_data.next(in, tg);
      // Task rows are chosen by the row's index in the global batch, so that they do not depend
      // on how the batch is split into ranks and micro-batches (task_mixture.h).
      if (mixture) mixture->apply(step - 1, train_data.global_row(micro, 0), o.micro_batch, in, tg);
      counts[micro] = std::count_if(tg, tg + micro_tokens, [](int32_t t) { return t != kIgnoreId; });
      batch[0] += counts[micro];
      batch[1] += rows_digest(in, tg, o.micro_batch, o.seq_len);
    }
    comm.all_reduce_sum(batch, 2);
    if (batch[0] == 0) throw dist::CollectiveError(concat("step ", step, ": the batch has no counted targets"));
    double sums[2] = {0, 0};  // summed token losses, squared gradient norm
    for (int64_t micro = 0; micro < accumulation; ++micro) {
      // Weighted by counted targets, the ranks' summed gradients are the global batch's mean.
      const float share = static_cast<float>(static_cast<double>(counts[micro]) / static_cast<double>(batch[0]));
      const double mean = decoder_forward_backward(model, acts, inputs.data() + micro * micro_tokens,
                                                   targets.data() + micro * micro_tokens, g, share);
      sums[0] += mean * static_cast<double>(counts[micro]);
    }
    const float* reduced = parallel.reduce_gradients(grads.data());
    sums[1] = optimizer.gradient_sum_of_squares(reduced);
    comm.all_reduce_sum(sums, 2);
    const double loss = sums[0] / static_cast<double>(batch[0]), norm = std::sqrt(sums[1]);
    if (!std::isfinite(loss) || !std::isfinite(norm))
      throw TrainingDiverged(concat("step ", step, ": loss ", loss, ", gradient norm ", norm,
                                    " is not finite; stopping (the last checkpoint in ",
                                    (run_dir / "checkpoints").string(), " is intact; try a lower --lr)"));
    const double lr = schedule.at(step);
    optimizer.step(model.weights.data(), reduced, lr, norm);
    parallel.all_gather(model.weights.data());
    if (o.check_replicas) parallel.verify_replicas(model.weights.data(), step);
    const double seconds = step_timer.seconds(), step_comm = comm.take_seconds();
    train_seconds += seconds;
    comm_seconds += step_comm;
    summary.steps_done = step;
    summary.last_train_loss = loss;
    const double tok_s = batch_tokens / seconds;
    const double mfu = step_flops / seconds / 1e9 / sgemm_gflops;

    if (leader) {
      json line{{"step", step}, {"loss", loss}, {"lr", lr}, {"grad_norm", norm}, {"tok_s", tok_s},
                {"mfu", mfu}, {"ms", seconds * 1e3}, {"data", hex64(batch[1])}};
      if (ranks > 1) line["comm_ms"] = step_comm * 1e3;
      metrics->append(line);
    }
    if (talk && (step % o.log_every == 0 || step == o.steps)) {
      const double eta = run_timer.seconds() / (step - start_step) * (o.steps - step);
      std::printf("step %5lld/%lld | loss %.4f | lr %.2e | gnorm %.3f | %.0f tok/s | MFU %.1f%%", (long long)step,
                  (long long)o.steps, loss, lr, norm, tok_s, 100 * mfu);
      if (ranks > 1) std::printf(" | comm %.0f ms", step_comm * 1e3);
      std::printf(" | ETA %s\n", format_duration(eta).c_str());
      std::fflush(stdout);
    }
    if ((o.eval_every > 0 && step % o.eval_every == 0) || step == o.steps) {
      summary.last_val_loss = evaluate();
      if (leader && o.eval_batches > 0) metrics->append(json{{"step", step}, {"val_loss", summary.last_val_loss}});
      if (talk && o.eval_batches > 0) std::printf("step %5lld | val loss %.4f\n", (long long)step, summary.last_val_loss);
    }
    if ((o.checkpoint_every > 0 && step % o.checkpoint_every == 0) || step == o.steps) checkpoint(step);
    comm.take_seconds();  // evaluation and checkpoints are not the step's communication
  }
  const int64_t ran = summary.steps_done - start_step;
  if (ran > 0) {
    summary.tokens_per_second = ran * batch_tokens / train_seconds;
    summary.mfu = ran * step_flops / train_seconds / 1e9 / sgemm_gflops;
    summary.comm_seconds_per_step = comm_seconds / ran;
  }
  return summary;
}

}  // namespace difftx
