#include "experiment/compare_defaults.h"

#include <algorithm>

#include "source_dir.h"

namespace difftx::experiment {

namespace fs = std::filesystem;

fs::path default_configs_dir() {
  if (fs::is_directory("configs")) return "configs";
  return fs::path(DIFFTX_SOURCE_DIR) / "configs";
}

train::TrainOptions compare_train_defaults() {
  train::TrainOptions o;
  o.seq_len = 256;
  o.micro_batch = 8;
  o.lr = 2e-3;
  o.warmup_steps = 50;
  o.mixture = {0.2, 0.2};
  o.eval_every = 50;
  o.eval_batches = 8;
  o.checkpoint_every = 100;
  o.log_every = 25;
  return o;
}

CompareOptions compare_defaults() {
  CompareOptions o;
  o.train = compare_train_defaults();
  AnalysisOptions& a = o.analysis;
  a.niah.contexts = {256};
  a.niah.needles = {1, 2, 4};
  a.niah.queried = {1, 2};
  a.niah.samples = 10;
  a.mqar.spec.pairs = 8;
  a.mqar.spec.queries = 8;
  a.mqar.samples = 100;
  a.prompts.per_depth = 4;
  a.outliers.tokens = 16384;
  a.bits = {0, 16, 8, 6, 4};
  return o;
}

int64_t apply_niah_recipe(CompareOptions& o, int64_t seq_len) {
  train::TrainOptions& t = o.train;
  t.seq_len = seq_len;
  t.micro_batch = std::max<int64_t>(1, 2048 / t.seq_len);
  t.lr = 2e-3;
  t.warmup_steps = 50;
  t.schedule = train::DecayShape::constant;
  t.mixture = {0.5, 0.2};
  t.eval_every = t.log_every = 250;
  t.checkpoint_every = 500;
  o.preset = "retrieval";
  AnalysisOptions& a = o.analysis;
  a.niah.contexts = {t.seq_len};
  a.niah.needles = {1, 2};
  a.niah.queried = {1};
  a.niah.depths = {0, 0.5, 1};
  a.niah.samples = 20;
  a.quant_val_batches = 16;
  return 3000 * t.seq_len * t.micro_batch;
}

void derive_analysis_options(CompareOptions& o) {
  AnalysisOptions& a = o.analysis;
  a.niah.seed = o.train.seed;
  a.quant_niah = a.niah;
  a.quant_niah.needles = {a.niah.needles.front()};
  a.quant_niah.queried = {1};
  a.mqar.seed = o.train.seed;
  a.prompts.context = a.niah.contexts.front();
  a.prompts.depths = a.niah.depths;
  a.prompts.seed = o.train.seed;
  a.val_seq_len = o.train.seq_len;
  a.val_micro_batch = o.train.micro_batch;
}

}  // namespace difftx::experiment
