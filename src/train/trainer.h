// The training loop behind `difftx train`: micro-batches with gradient accumulation, AdamW,
// the LR schedule, progress lines, JSONL metrics, validation, checkpoints and resume.
#pragma once
#include <cstdint>
#include <string>

#include "eval/retrieval/mixture_spec.h"
#include "train/optimizer.h"
#include "train/schedule.h"

namespace difftx {

struct TrainOptions {
  std::string config_path;  // model config.json (configs/<size>/<variant>.json)
  std::string data_dir;     // a directory made by `difftx prepare`
  std::string out_dir;      // RUN_DIR: checkpoints/, metrics.jsonl
  int64_t steps = 1000;
  int64_t seq_len = 256;
  int64_t micro_batch = 8;     // sequences per forward/backward
  int64_t batch_tokens = 0;    // tokens per optimizer step; 0: one micro-batch
  double lr = 1e-3;
  double min_lr_ratio = 0.1;   // the schedule's floor, as a fraction of lr
  int64_t warmup_steps = 100;
  DecayShape schedule = DecayShape::cosine;
  AdamWConfig adamw;
  uint64_t seed = 1;
  retrieval::MixtureSpec mixture;  // retrieval task rows mixed into the batches (task_mixture.h)
  int64_t eval_every = 100;    // validation loss every K steps (0: only at the end)
  int64_t eval_batches = 16;   // micro-batches of val data per evaluation
  int64_t checkpoint_every = 500;
  int keep_checkpoints = 2;
  int64_t log_every = 1;
  bool resume = false;
  bool quiet = false;          // no progress lines (metrics are still written)
};

struct TrainSummary {
  int64_t steps_done = 0;
  double last_train_loss = 0;
  double last_val_loss = 0;     // NaN when never evaluated
  double tokens_per_second = 0;  // over the steps this invocation ran
  double mfu = 0;                // model FLOP/s / in-run sgemm rate
};

TrainSummary train(const TrainOptions& options);

}  // namespace difftx
