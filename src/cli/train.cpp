// `difftx train`: train a model from scratch (or resume) on prepared token shards.
#include <cstdio>

#include "cli/command.h"
#include "cli/train_options.h"
#include "train/trainer.h"

namespace difftx::cli {
namespace {

int run_train(Args& args) {
  TrainOptions o;
  o.config_path = args.require("config");
  o.data_dir = args.require("data");
  o.out_dir = args.require("out");
  o.steps = args.get_int("steps", o.steps);
  read_train_options(args, o);
  o.resume = args.flag("resume");
  o.quiet = args.flag("quiet");
  args.finish();
  const TrainSummary s = train(o);
  std::printf("done: %lld steps, train loss %.4f, val loss %.4f, %.0f tok/s, MFU %.1f%%\n", (long long)s.steps_done,
              s.last_train_loss, s.last_val_loss, s.tokens_per_second, 100 * s.mfu);
  return 0;
}

}  // namespace

DIFFTX_COMMAND("train", "train a baseline, DIFF V1 or DIFF V2 model on prepared shards",
               "  --config FILE         model config.json (see configs/)\n"
               "  --data DIR            prepared data (difftx prepare)\n"
               "  --out RUN_DIR         checkpoints/, metrics.jsonl, run.json\n"
               "  --steps N             optimizer steps (default 1000)\n" +
                   train_options_help(TrainOptions{}) +
               "  --resume              continue from RUN_DIR's latest checkpoint\n"
               "  --quiet               no progress lines",
               run_train);

}  // namespace difftx::cli
