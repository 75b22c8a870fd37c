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

namespace difftx::train {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// An option's name in errors, as the options spell it (TrainOptions::spelling).
std::string named(const TrainOptions& o, std::string_view field) { return option_name(field, o.spelling); }

std::string format_duration(double seconds) {
  char buf[32];
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
  else std::snprintf(buf, sizeof buf, "%llds", (long long)s);
  return buf;
}

// Rank 0's progress lines: the options' callback, or stdout.
class Reporter {
 public:
  Reporter(const TrainOptions& o, bool leader) : report_(o.report), leader_(leader), on_(leader && !o.quiet) {}
  bool on() const { return on_; }
  // A progress line: none with --quiet.
  template <typename... Parts>
  void line(const Parts&... parts) const {
    if (on_) emit(concat(parts...));
  }
  // What the run did to the user's files (dropped log lines): said even with --quiet.
  template <typename... Parts>
  void notice(const Parts&... parts) const {
    if (leader_) emit(concat(parts...));
  }

 private:
  void emit(const std::string& text) const {
    if (report_) {
      report_(text);
    } else {
      std::printf("%s\n", text.c_str());
      std::fflush(stdout);
    }
  }
  std::function<void(const std::string&)> report_;
  bool leader_, on_;
};

std::string format(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

json options_to_json(const TrainOptions& o) {
  json j{{"config", o.config_path}, {"data", o.data_dir}, {"steps", o.steps}, {"seq_len", o.seq_len},
         {"micro_batch", o.micro_batch}, {"batch_tokens", o.batch_tokens}, {"lr", o.lr},
         {"min_lr_ratio", o.min_lr_ratio}, {"warmup_steps", o.warmup_steps},
         {"beta1", o.adamw.beta1}, {"beta2", o.adamw.beta2}, {"eps", o.adamw.eps},
         {"weight_decay", o.adamw.weight_decay}, {"grad_clip", o.adamw.grad_clip}, {"seed", o.seed}};
  if (!o.mixture.empty()) j["mix"] = retrieval::mixture_to_json(o.mixture);  // absent without one, as before
  if (!o.init_dir.empty()) j["init"] = o.init_dir;
  return j;
}

// What every rank must agree on (paths may differ between hosts; the files must not).
json inputs_that_must_match(const TrainOptions& o, const model::ModelConfig& config,
                            const std::vector<fs::path>& tokenizer_files) {
  json options = options_to_json(o);
  options.erase("config");
  options.erase("data");
  options.update(json{{"schedule", static_cast<int>(o.schedule)}, {"eval_every", o.eval_every},
                      {"eval_batches", o.eval_batches}, {"checkpoint_every", o.checkpoint_every},
                      {"resume", o.resume}, {"bucket_floats", o.bucket_floats}, {"check_replicas", o.check_replicas}});
  // The data's metadata records every shard's token count and the sources' sha256.
  json data = {{"metadata.json", data::sha256_hex(io::read_whole_file(fs::path(o.data_dir) / data::kMetadataFile))}};
  for (const fs::path& f : tokenizer_files) data[f.filename().string()] = data::sha256_hex(io::read_whole_file(f));
  return json{{"model config", model::config_to_json(config)}, {"options", options}, {"data", data}};
}

// --init: the run's weights become the model directory's (rank 0; start_or_resume shares them).
void start_from_model(const TrainOptions& o, model::Model& model, const Reporter& say) {
  const model::Model init = model::load_model_dir(o.init_dir);
  // The context limit may differ (a second stage at a longer --seq-len); nothing else may.
  json from = model::config_to_json(init.config), to = model::config_to_json(model.config);
  from.erase("max_position_embeddings");
  to.erase("max_position_embeddings");
  DIFFTX_CHECK(from == to, named(o, "init"), " ", o.init_dir, ": its model config differs from ", o.config_path, " (",
               from.dump(), " against ", to.dump(), ")");
  std::copy_n(init.host_weights(), init.table.total_floats(), model.host_weights());
  say.line("starting from the weights of ", o.init_dir);
}

// Starts or resumes a run: rank 0 alone reads the run directory (and checks it), and the
// other ranks get rank 0's weights (also when starting: initialisation computed with another
// host's libm could differ in the last bit) and, when resuming, the optimizer's moments.
// Returns the resumed checkpoint's state.json, or an empty object.
json start_or_resume(const TrainOptions& o, dist::Communicator& comm, DataParallel& parallel, model::Model& model,
                     AdamW& optimizer, const Reporter& say) {
  const fs::path run_dir = o.out_dir;
  Buffer<float> m_scratch, v_scratch;
  OptimizerMoments moments{parallel.moment_arena(optimizer.first_moment().host(), m_scratch),
                           parallel.moment_arena(optimizer.second_moment().host(), v_scratch)};
  std::string state_text;
  if (comm.rank() == 0) {
    const auto latest = latest_checkpoint(run_dir);
    if (o.resume && latest) {
      json state = load_checkpoint(*latest, model, moments);
      state["optimizer_steps_taken"] = moments.steps_taken;
      state_text = state.dump();
      say.line("resumed from ", latest->string(), " (step ", state.at("step").get<int64_t>(), ")");
    } else {
      DIFFTX_CHECK(!latest, run_dir.string(),
                   " already holds checkpoints: pass ", named(o, "resume"), " to continue that run, or choose another ",
                   named(o, "out"));
      if (!o.init_dir.empty()) start_from_model(o, model, say);
      io::write_file_atomically(run_dir / "metrics.jsonl", "");
    }
  }
  state_text = dist::broadcast_text(comm, state_text, 0);
  parallel.broadcast(model.host_weights(), 0);
  if (state_text.empty()) return json::object();
  parallel.scatter_moments(moments.m, optimizer.first_moment().host(), 0);
  parallel.scatter_moments(moments.v, optimizer.second_moment().host(), 0);
  json state = io::parse_json_text(state_text, "the resumed state");
  optimizer.set_steps_taken(state.at("optimizer_steps_taken").get<int64_t>());
  return state;
}

// Changed options are allowed when resuming (a lower --lr after a divergence, more --steps,
// another number of ranks), but the run is then no longer the uninterrupted run's twin, so say so.
void note_changes(const json& state, const TrainOptions& o, int ranks, int64_t batch_rows, const Reporter& say) {
  const json before = state.at("options"), now = options_to_json(o);
  for (const auto& [key, value] : now.items())
    if (before.value(key, json()) != value)
      say.line("note: resuming with ", key, " = ", value.dump(), " (the checkpoint's run used ",
               before.value(key, json()).dump(), ")");
  // (json defaults: a tampered value of another type is a change, not an exception)
  const json world_size = state.value("world_size", json(1)), rows = state.value("batch_rows", json(batch_rows));
  if (world_size != ranks)
    say.line("note: resuming on ", ranks, " rank", ranks == 1 ? "" : "s", " (the checkpoint's run used ",
             io::json_value_for_message(world_size), ")");
  if (rows != batch_rows)
    say.line("note: the global batch changes from ", io::json_value_for_message(rows), " to ", batch_rows,
             " rows, so the data order differs from the checkpoint's run");
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
  const auto name = [&](std::string_view field) { return named(o, field); };
  DIFFTX_CHECK(o.steps > 0, name("steps"), " must be positive");
  DIFFTX_CHECK(o.seq_len > 0 && o.micro_batch > 0, name("seq_len"), " and ", name("micro_batch"), " must be positive");
  DIFFTX_CHECK(product_at_most({o.seq_len, o.micro_batch}, kMaxStepTokens).has_value(), name("micro_batch"), " ",
               o.micro_batch, " x ", name("seq_len"), " ", o.seq_len, " exceeds the ", kMaxStepTokens,
               " tokens one micro-batch may hold");
  DIFFTX_CHECK(o.batch_tokens >= 0, name("batch_tokens"), " must not be negative");
  DIFFTX_CHECK(o.eval_batches >= 0 && o.eval_every >= 0 && o.checkpoint_every >= 0 && o.warmup_steps >= 0,
               name("eval_batches"), ", ", name("eval_every"), ", ", name("checkpoint_every"), " and ", name("warmup"),
               " must not be negative");
  DIFFTX_CHECK(o.log_every > 0, name("log_every"), " must be positive");
  DIFFTX_CHECK(o.keep_checkpoints >= 1, name("keep_checkpoints"), " must be at least 1");
  DIFFTX_CHECK(std::isfinite(o.lr) && o.lr > 0, name("lr"), " must be a positive finite number, got ", o.lr);
  DIFFTX_CHECK(o.min_lr_ratio >= 0 && o.min_lr_ratio <= 1, name("min_lr_ratio"), " must lie in [0, 1], got ",
               o.min_lr_ratio);
  DIFFTX_CHECK(o.adamw.beta1 >= 0 && o.adamw.beta1 < 1 && o.adamw.beta2 >= 0 && o.adamw.beta2 < 1, name("beta1"),
               " and ", name("beta2"), " must lie in [0, 1), got ", o.adamw.beta1, " and ", o.adamw.beta2);
  DIFFTX_CHECK(std::isfinite(o.adamw.weight_decay) && o.adamw.weight_decay >= 0 && std::isfinite(o.adamw.grad_clip) &&
                   o.adamw.grad_clip >= 0,
               name("weight_decay"), " and ", name("grad_clip"), " must be finite and not negative, got ",
               o.adamw.weight_decay, " and ", o.adamw.grad_clip);
  DIFFTX_CHECK(o.bucket_floats > 0, name("bucket_mb"), " must be positive");
  DIFFTX_CHECK(!o.out_dir.empty(), name("out"), " is empty: the run needs a directory to write to");
}

void report_dropped_metrics(const DroppedMetrics& dropped, const fs::path& path, int64_t step, const Reporter& say) {
  if (dropped.lines > 0)
    say.notice("note: dropped ", dropped.lines, " lines of ", path.string(), " after step ", step,
             " (written after the checkpoint this run resumes from; the resumed run writes them again)");
  if (dropped.unreadable > 0)
    say.notice("note: dropped ", dropped.unreadable, " unreadable lines of ", path.string(), " (a line torn by a crash)");
}

std::string hex64(uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}


// What one optimizer step measured.
struct StepStats {
  int64_t step = 0;
  double loss = 0, grad_norm = 0, lr = 0;
  double seconds = 0, comm_seconds = 0;
  uint64_t rows_digest = 0;
};

// A training run in pieces: setup (the constructor: sizes, model, data, resume), one optimizer
// step, validation, checkpoint, and the record of each (metrics.jsonl and progress lines).
// train() below drives them.
class TrainingRun {
 public:
  TrainingRun(const TrainOptions& o, dist::Communicator& outer_comm);
  int64_t start_step() const { return start_step_; }
  StepStats step(int64_t step);
  double evaluate();
  void checkpoint(int64_t step);
  void record_step(const StepStats& s);
  void record_validation(int64_t step, double val_loss);
  TrainSummary summary() const;
  dist::TimedCommunicator& comm() { return comm_; }
  int64_t batch_tokens() const { return batch_tokens_; }

 private:
  void check_sizes();
  void announce() const;

  const TrainOptions& o_;
  dist::TimedCommunicator comm_;
  const int ranks_, rank_;
  const bool leader_;
  const Reporter say_;
  int64_t micro_tokens_ = 0, batch_tokens_ = 0, accumulation_ = 0, batch_rows_ = 0;
  const model::ModelConfig config_;
  DataParallel parallel_;
  model::Model model_;
  data::TokenLoader train_data_, val_data_;
  std::optional<retrieval::TaskMixture> mixture_;
  std::vector<fs::path> tokenizer_files_;
  AdamW optimizer_;
  const LrSchedule schedule_;
  const fs::path run_dir_, metrics_path_;
  std::optional<RunDirectoryLock> lock_;  // rank 0 alone writes the run directory
  std::optional<MetricsLog> metrics_;
  int64_t start_step_ = 0;
  model::Activations acts_;
  backends::DeviceBuffer grads_;
  model::ModelTensors grad_views_;
  // The step's micro-batches, drawn before the first backward so that every micro-batch's
  // gradient can be weighted by its share of the global batch's counted targets.
  std::vector<int32_t> inputs_, targets_;
  std::vector<int64_t> counts_;
  // The MFU's denominator, measured at the start. A start beside other work reads it low, and
  // every MFU then exceeds 100%: a step that outruns it measures it again (at most once per log
  // interval), keeping the best.
  double sgemm_gflops_ = 0, step_flops_ = 0;  // step_flops_: per rank
  int64_t next_sgemm_check_ = 0;
  Timer run_timer_;
  TrainSummary summary_;
  double train_seconds_ = 0, comm_seconds_ = 0;
};

// Checks the options and the batch arithmetic before anything is allocated from them.
int64_t checked_micro_tokens(const TrainOptions& o) {
  check_train_options(o);
  return *product_at_most({o.seq_len, o.micro_batch}, kMaxStepTokens);
}

int64_t global_batch_tokens(const TrainOptions& o, int64_t micro_tokens, int ranks) {
  const int64_t batch_tokens = o.batch_tokens > 0 ? o.batch_tokens : micro_tokens * ranks;
  DIFFTX_CHECK(batch_tokens / ranks <= kMaxStepTokens, named(o, "batch_tokens"), " ", batch_tokens, " over ", ranks,
               " rank(s) exceeds the ", kMaxStepTokens, " tokens a rank can hold for one step");
  DIFFTX_CHECK(batch_tokens % (micro_tokens * ranks) == 0, named(o, "batch_tokens"), " ", batch_tokens,
               " must be a multiple of ranks x ", named(o, "micro_batch"), " x ", named(o, "seq_len"), " = ", ranks,
               " x ", o.micro_batch, " x ",
               o.seq_len);
  return batch_tokens;
}

data::TokenLoader open_data(const TrainOptions& o, const model::ModelConfig& config, int rank, int ranks,
                            int64_t accumulation) {
  DIFFTX_CHECK(o.seq_len <= config.max_position_embeddings, named(o, "seq_len"), " ", o.seq_len,
               " exceeds max_position_embeddings ", config.max_position_embeddings, " of ", o.config_path);
  io::require_directory(o.data_dir, "data directory", " (make one with difftx prepare)");
  return data::TokenLoader(o.data_dir, "train",
                           {.batch = o.micro_batch, .seq_len = o.seq_len, .seed = o.seed, .rank = rank,
                            .world_size = ranks, .micro_batches = accumulation});
}

TrainingRun::TrainingRun(const TrainOptions& o, dist::Communicator& outer_comm)
    : o_(o),
      comm_(outer_comm),
      ranks_(comm_.size()),
      rank_(comm_.rank()),
      leader_(rank_ == 0),
      say_(o, leader_),
      micro_tokens_(checked_micro_tokens(o)),
      batch_tokens_(global_batch_tokens(o, micro_tokens_, ranks_)),
      accumulation_(batch_tokens_ / (micro_tokens_ * ranks_)),
      batch_rows_(batch_tokens_ / o.seq_len),
      config_(model::model_config_from_json(io::read_json_file(o.config_path), o.config_path)),
      parallel_(comm_, model::ParameterTable(config_).total_floats(), o.bucket_floats),
      model_(config_, parallel_.padded_floats()),
      train_data_(open_data(o, config_, rank_, ranks_, accumulation_)),
      // Validation reads the split's first eval_batches x micro_batch x ranks windows, shared
      // among the ranks: the same windows for 2 ranks x B rows as for 1 rank x 2B.
      val_data_(o.data_dir, "val",
                {.batch = o.micro_batch, .seq_len = o.seq_len, .rank = rank_, .world_size = ranks_,
                 .max_windows = std::max<int64_t>(o.eval_batches, 1) * o.micro_batch * ranks_}),
      optimizer_(*model_.backend, model_.table, o.adamw, parallel_.owned_pieces()),
      schedule_{o.lr, o.lr * o.min_lr_ratio, o.warmup_steps, o.steps, o.schedule},
      run_dir_(o.out_dir),
      metrics_path_(run_dir_ / "metrics.jsonl"),
      acts_(config_, o.micro_batch, o.seq_len, model::ActivationUse::training, *model_.backend),
      grads_(model_.backend->allocate(parallel_.padded_floats() * int64_t{sizeof(float)})),
      grad_views_(model::bind_tensors(config_, model_.table, grads_.as<float>())),
      inputs_(accumulation_ * micro_tokens_),
      targets_(inputs_.size()),
      counts_(accumulation_) {
  check_sizes();
  if (!o.mixture.empty()) mixture_.emplace(o.mixture, o.data_dir, o.seq_len, o.seed, o.spelling);
  // The data's tokenizer travels with every checkpoint, so each is a complete model directory
  // (generate and eval need it): data without one is refused before anything is trained.
  tokenizer_files_ = data::tokenizer_files(o.data_dir);
  dist::require_same_inputs(comm_, inputs_that_must_match(o, config_, tokenizer_files_));

  model::init_parameters(config_, model_.table, model_.host_weights(), o.seed);
  if (leader_) {
    fs::create_directories(run_dir_);
    lock_.emplace(run_dir_);
  }
  const json resumed = start_or_resume(o, comm_, parallel_, model_, optimizer_, say_);
  if (!resumed.empty()) {
    start_step_ = resumed.at("step").get<int64_t>();
    DIFFTX_CHECK(o.steps >= start_step_, named(o, "steps"), " ", o.steps, " is below the ", start_step_,
                 " steps the resumed checkpoint has done (", run_dir_.string(), ")");
    if (o.steps == start_step_) say_.line("note: the run has done its ", o.steps, " steps already; nothing to train");
    train_data_.restore(resumed.at("train_data"));
    if (leader_) report_dropped_metrics(truncate_metrics_after(metrics_path_, start_step_), metrics_path_, start_step_, say_);
    if (say_.on()) note_changes(resumed, o, ranks_, batch_rows_, say_);
  }
  if (leader_) {
    io::write_json_file(run_dir_ / "run.json",
                        json{{"options", options_to_json(o)}, {"model", model::config_to_json(config_)},
                             {"parameters", config_.total_parameters()}, {"world_size", ranks_},
                             {"communicator", comm_.description()}});
    metrics_.emplace(metrics_path_);
  }
  sgemm_gflops_ = kernels::measure_sgemm_gflops();
  step_flops_ = 3.0 * config_.forward_flops(o.micro_batch, o.seq_len) * accumulation_;
  announce();
  summary_.last_val_loss = std::numeric_limits<double>::quiet_NaN();
  run_timer_.reset();  // the ETA counts training, not setup
  comm_.take_seconds();
}

void TrainingRun::check_sizes() {
  data::check_fits_vocabulary(train_data_.dataset(), config_.vocab_size, o_.config_path);
  if (train_data_.vocab_size() < config_.vocab_size)
    say_.line("note: ", o_.config_path, " has vocab_size ", config_.vocab_size, " but the data's tokenizer has ",
              train_data_.vocab_size(), " tokens: ", config_.vocab_size - train_data_.vocab_size(),
              " embedding rows will never see a token (set vocab_size to ", train_data_.vocab_size(),
              " to size the model from the data)");
}

void TrainingRun::announce() const {
  say_.line("model ", kernels::attention_kind_name(config_.attention), ": ",
            format("%.2f", config_.total_parameters() / 1e6), "M parameters, ", batch_tokens_, " tokens/step (", ranks_,
            " rank", ranks_ == 1 ? "" : "s", " x ",
            accumulation_, " x ", o_.micro_batch, " x ", o_.seq_len, "), sgemm ", format("%.0f", sgemm_gflops_),
            " GFLOPS, ", thread_count(), " threads/rank", ranks_ > 1 ? ", " : "",
            ranks_ > 1 ? comm_.description() : "");
  if (mixture_) say_.line(mixture_->describe());
}

StepStats TrainingRun::step(int64_t step) {
  Timer step_timer;
  StepStats out;
  out.step = step;
  model_.backend->zero(grads_.as<void>(), grads_.bytes());
  uint64_t batch[2] = {0, 0};  // counted targets, rows digest (summed over ranks)
  for (int64_t micro = 0; micro < accumulation_; ++micro) {
    int32_t* in = inputs_.data() + micro * micro_tokens_;
    int32_t* tg = targets_.data() + micro * micro_tokens_;
    train_data_.next(in, tg);
    // Task rows are chosen by the row's index in the global batch, so that they do not depend
    // on how the batch is split into ranks and micro-batches (task_mixture.h).
    if (mixture_) mixture_->apply(step - 1, train_data_.global_row(micro, 0), o_.micro_batch, in, tg);
    counts_[micro] = std::count_if(tg, tg + micro_tokens_, [](int32_t t) { return t != model::kIgnoreId; });
    batch[0] += counts_[micro];
    batch[1] += rows_digest(in, tg, o_.micro_batch, o_.seq_len);
  }
  comm_.all_reduce_sum(batch, 2);
  if (batch[0] == 0) throw dist::CollectiveError(concat("step ", step, ": the batch has no counted targets"));
  double sums[2] = {0, 0};  // summed token losses, squared gradient norm
  for (int64_t micro = 0; micro < accumulation_; ++micro) {
    // Weighted by counted targets, the ranks' summed gradients are the global batch's mean.
    const float share = static_cast<float>(static_cast<double>(counts_[micro]) / static_cast<double>(batch[0]));
    const double mean = model::decoder_forward_backward(model_, acts_, inputs_.data() + micro * micro_tokens_,
                                                        targets_.data() + micro * micro_tokens_, grad_views_, share);
    sums[0] += mean * static_cast<double>(counts_[micro]);
  }
  // The collectives move host memory: the CPU backend's.
  const backends::DevicePtr<const float> reduced(parallel_.reduce_gradients(grads_.as<float>().host()));
  sums[1] = optimizer_.gradient_sum_of_squares(reduced);
  comm_.all_reduce_sum(sums, 2);
  out.loss = sums[0] / static_cast<double>(batch[0]);
  out.grad_norm = std::sqrt(sums[1]);
  if (!std::isfinite(out.loss) || !std::isfinite(out.grad_norm))
    throw TrainingDiverged(concat("step ", step, ": loss ", out.loss, ", gradient norm ", out.grad_norm,
                                  " is not finite; stopping (the last checkpoint in ",
                                  (run_dir_ / "checkpoints").string(), " is intact; try a lower ", named(o_, "lr"),
                                  ")"));
  out.lr = schedule_.at(step);
  optimizer_.step(model_.weights.as<float>(), reduced, out.lr, out.grad_norm);
  parallel_.all_gather(model_.host_weights());
  if (o_.check_replicas) parallel_.verify_replicas(model_.host_weights(), step);
  out.seconds = step_timer.seconds();
  out.comm_seconds = comm_.take_seconds();
  out.rows_digest = batch[1];
  return out;
}

void TrainingRun::record_step(const StepStats& s) {
  train_seconds_ += s.seconds;
  comm_seconds_ += s.comm_seconds;
  summary_.steps_done = s.step;
  summary_.last_train_loss = s.loss;
  const double tok_s = batch_tokens_ / s.seconds;
  if (step_flops_ / s.seconds / 1e9 > sgemm_gflops_ && s.step >= next_sgemm_check_) {
    const double again = kernels::measure_sgemm_gflops(1024, 0.05);
    if (again > sgemm_gflops_)
      say_.line("note: sgemm measured again at ", format("%.0f", again), " GFLOPS (", format("%.0f", sgemm_gflops_),
                " before, beside other work): the MFU's denominator from here on");
    sgemm_gflops_ = std::max(sgemm_gflops_, again);
    next_sgemm_check_ = s.step + o_.log_every;
  }
  const double mfu = step_flops_ / s.seconds / 1e9 / sgemm_gflops_;
  if (leader_) {
    json line{{"step", s.step}, {"loss", s.loss}, {"lr", s.lr}, {"grad_norm", s.grad_norm}, {"tok_s", tok_s},
              {"mfu", mfu}, {"ms", s.seconds * 1e3}, {"data", hex64(s.rows_digest)}};
    if (ranks_ > 1) line["comm_ms"] = s.comm_seconds * 1e3;
    metrics_->append(line);
  }
  if (s.step % o_.log_every == 0 || s.step == o_.steps) {
    const double eta = run_timer_.seconds() / (s.step - start_step_) * (o_.steps - s.step);
    char head[64];
    std::snprintf(head, sizeof head, "step %5lld/%lld", (long long)s.step, (long long)o_.steps);
    say_.line(head, " | loss ", format("%.4f", s.loss), " | lr ", format("%.2e", s.lr), " | gnorm ",
              format("%.3f", s.grad_norm), " | ", format("%.0f", tok_s), " tok/s | MFU ", format("%.1f", 100 * mfu),
              "%", ranks_ > 1 ? " | comm " + format("%.0f", s.comm_seconds * 1e3) + " ms" : std::string(),
              " | ETA ", format_duration(eta));
  }
}

double TrainingRun::evaluate() {
  if (o_.eval_batches == 0) return std::numeric_limits<double>::quiet_NaN();
  val_data_.rewind();
  double total[2] = {0, 0};  // summed loss, counted targets
  while (val_data_.next(inputs_.data(), targets_.data()) > 0) {
    const model::LossSum s = model::decoder_loss(model_, acts_, inputs_.data(), targets_.data());
    total[0] += s.sum;
    total[1] += static_cast<double>(s.count);
  }
  comm_.all_reduce_sum(total, 2);
  return total[1] > 0 ? total[0] / total[1] : std::numeric_limits<double>::quiet_NaN();
}

void TrainingRun::record_validation(int64_t step, double val_loss) {
  summary_.last_val_loss = val_loss;
  if (o_.eval_batches == 0) return;
  if (leader_) metrics_->append(json{{"step", step}, {"val_loss", val_loss}});
  char head[32];
  std::snprintf(head, sizeof head, "step %5lld", (long long)step);
  say_.line(head, " | val loss ", format("%.4f", val_loss));
}

void TrainingRun::checkpoint(int64_t step) {
  Buffer<float> m_scratch, v_scratch;
  OptimizerMoments moments{parallel_.moment_arena(optimizer_.first_moment().host(), m_scratch),
                           parallel_.moment_arena(optimizer_.second_moment().host(), v_scratch),
                           optimizer_.steps_taken()};
  parallel_.gather_moments(optimizer_.first_moment().host(), moments.m);
  parallel_.gather_moments(optimizer_.second_moment().host(), moments.v);
  if (!leader_) return;
  metrics_->sync();  // the log is durable up to the step the checkpoint will say
  save_checkpoint(run_dir_, step, model_, moments,
                  json{{"options", options_to_json(o_)}, {"train_data", train_data_.state()}, {"world_size", ranks_},
                       {"batch_rows", batch_rows_}},
                  tokenizer_files_, o_.keep_checkpoints);
}

TrainSummary TrainingRun::summary() const {
  TrainSummary out = summary_;
  const int64_t ran = out.steps_done - start_step_;
  if (ran > 0) {
    out.tokens_per_second = ran * batch_tokens_ / train_seconds_;
    out.mfu = ran * step_flops_ / train_seconds_ / 1e9 / sgemm_gflops_;
    out.comm_seconds_per_step = comm_seconds_ / ran;
  }
  return out;
}

}  // namespace

TrainSummary train(const TrainOptions& o, dist::Communicator& comm) {
  DIFFTX_CHECK(!o.on_step || comm.size() == 1, "a per-step callback needs a single-rank run (", comm.size(), " ranks)");
  TrainingRun run(o, comm);
  for (int64_t step = run.start_step() + 1; step <= o.steps; ++step) {
    const StepStats stats = run.step(step);
    run.record_step(stats);
    StepReport report{step, o.steps, stats.loss, stats.lr, stats.grad_norm, 0, std::numeric_limits<double>::quiet_NaN(),
                      step % o.log_every == 0 || step == o.steps};
    report.tokens_per_second = run.batch_tokens() / stats.seconds;
    if ((o.eval_every > 0 && step % o.eval_every == 0) || step == o.steps) {
      report.val_loss = run.evaluate();
      run.record_validation(step, report.val_loss);
    }
    const bool go_on = !o.on_step || o.on_step(report);
    if (!go_on || (o.checkpoint_every > 0 && step % o.checkpoint_every == 0) || step == o.steps) run.checkpoint(step);
    run.comm().take_seconds();  // evaluation and checkpoints are not the step's communication
    if (!go_on) break;
  }
  return run.summary();
}

}  // namespace difftx::train
