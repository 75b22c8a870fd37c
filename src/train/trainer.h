// The training loop behind `difftx train`: micro-batches with gradient accumulation, AdamW,
// the LR schedule, progress lines, JSONL metrics, validation, checkpoints and resume; data
// parallel over the ranks of a communicator (ZeRO-1: train/data_parallel.h). The global batch
// (its rows: data/loader.h) and everything saved are the same for any number of ranks, so a
// run may resume on another number of ranks. Rank 0 alone prints, writes metrics and
// checkpoints; the run directory need exist only where rank 0 runs.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/option_name.h"
#include "dist/communicator.h"
#include "data/tasks/mixture_spec.h"
#include "train/optimizer.h"
#include "train/schedule.h"

namespace difftx::train {

// One optimizer step as the trainer's optional on_step hook sees it.
struct StepReport {
  int64_t step = 0, steps = 0;  // this step, of the run's total
  double loss = 0, lr = 0, grad_norm = 0, tokens_per_second = 0;
  double val_loss = 0;          // NaN unless validation ran after this step
  bool logged = false;          // a progress-line step (log_every, or the last)
};

struct TrainOptions {
  std::string config_path;  // model config.json (configs/<size>/<variant>.json)
  // A model directory (any format load_model_dir reads) whose weights a new run starts from
  // instead of random ones: fine-tuning, or a second stage at a longer context. Its config must
  // be config_path's but for max_position_embeddings. The optimizer starts fresh at step 0; a
  // resumed run ignores it.
  std::string init_dir;
  std::string data_dir;     // a directory made by `difftx prepare`
  std::string out_dir;      // RUN_DIR: checkpoints/, metrics.jsonl
  int64_t steps = 1000;
  int64_t seq_len = 256;
  int64_t micro_batch = 8;     // sequences per forward/backward, on each rank
  int64_t batch_tokens = 0;    // tokens per optimizer step over all ranks; 0: one micro-batch per rank
  double lr = 1e-3;
  double min_lr_ratio = 0.1;   // the schedule's floor, as a fraction of lr
  int64_t warmup_steps = 100;
  DecayShape schedule = DecayShape::cosine;
  AdamWConfig adamw;
  uint64_t seed = 1;
  retrieval::MixtureSpec mixture;  // retrieval task rows mixed into the batches (task_mixture.h)
  int64_t eval_every = 100;    // validation loss every K steps (0: only at the end)
  int64_t eval_batches = 16;   // micro-batches of val data per evaluation and rank (0: none)
  int64_t checkpoint_every = 500;
  int keep_checkpoints = 2;
  int64_t log_every = 1;
  bool resume = false;
  bool quiet = false;          // no progress lines (metrics are still written)
  // Where rank 0's progress lines go (one line a call, without its newline); stdout when empty.
  std::function<void(const std::string&)> report;
  // Called after every step (and its validation) in a single-rank run; returning false ends the
  // run there, after a checkpoint of that step (an embedding program's stop: the Python module).
  std::function<bool(const StepReport&)> on_step;
  int64_t bucket_floats = int64_t(1) << 22;  // gradient bucket size of data parallelism (16 MiB)
  bool check_replicas = false;  // compare every rank's parameters after every step
  // How errors name the options: the C API's fields and Python's keywords ("seq_len",
  // "warmup"), or the CLI's flags where they came from flags.
  OptionSpelling spelling = OptionSpelling::field;
};

// Tokens one rank holds for a micro-batch, or for a whole step: the trainer allocates them.
inline constexpr int64_t kMaxStepTokens = int64_t{1} << 28;

// A non-finite loss or gradient norm: the run diverged. Every rank raises it at the same step
// (from all-reduced values), so it is collective; the last checkpoint is intact.
struct TrainingDiverged : dist::CollectiveError {
  using dist::CollectiveError::CollectiveError;
};

struct TrainSummary {
  int64_t steps_done = 0;
  double last_train_loss = 0;
  double last_val_loss = 0;     // NaN when never evaluated
  double tokens_per_second = 0;  // over the steps this invocation ran, all ranks together
  double mfu = 0;                // model FLOP/s per rank / the in-run sgemm rate of a rank
  double comm_seconds_per_step = 0;  // in collectives (including waits for other ranks)
};

// Collective over `comm`: every rank calls it with the same options (checked at start).
TrainSummary train(const TrainOptions& options, dist::Communicator& comm);

}  // namespace difftx::train
