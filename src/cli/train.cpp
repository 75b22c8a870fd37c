// `difftx train`: train a model from scratch (or resume) on prepared token shards.
#include <cstdio>

#include "cli/command.h"
#include "eval/retrieval/mixture_spec.h"
#include "train/trainer.h"

namespace difftx::cli {
namespace {

int run_train(Args& args) {
  TrainOptions o;
  o.config_path = args.require("config");
  o.data_dir = args.require("data");
  o.out_dir = args.require("out");
  o.steps = args.get_int("steps", o.steps);
  o.seq_len = args.get_int("seq-len", o.seq_len);
  o.micro_batch = args.get_int("micro-batch", o.micro_batch);
  o.batch_tokens = args.get_int("batch-tokens", o.batch_tokens);
  o.lr = args.get_double("lr", o.lr);
  o.min_lr_ratio = args.get_double("min-lr-ratio", o.min_lr_ratio);
  o.warmup_steps = args.get_int("warmup", o.warmup_steps);
  o.schedule = decay_shape_from_name(args.get("schedule", "cosine"));
  o.adamw.weight_decay = args.get_double("weight-decay", o.adamw.weight_decay);
  o.adamw.grad_clip = args.get_double("grad-clip", o.adamw.grad_clip);
  o.adamw.beta1 = args.get_double("beta1", o.adamw.beta1);
  o.adamw.beta2 = args.get_double("beta2", o.adamw.beta2);
  o.seed = static_cast<uint64_t>(args.get_int("seed", static_cast<int64_t>(o.seed)));
  o.mixture = retrieval::parse_mixture(args.get("mix", ""));
  o.eval_every = args.get_int("eval-every", o.eval_every);
  o.eval_batches = args.get_int("eval-batches", o.eval_batches);
  o.checkpoint_every = args.get_int("checkpoint-every", o.checkpoint_every);
  o.keep_checkpoints = static_cast<int>(args.get_int("keep-checkpoints", o.keep_checkpoints));
  o.log_every = args.get_int("log-every", o.log_every);
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
               "  --steps N             optimizer steps (default 1000)\n"
               "  --seq-len T           tokens per sequence (default 256)\n"
               "  --micro-batch B       sequences per forward/backward (default 8)\n"
               "  --batch-tokens N      tokens per optimizer step, a multiple of B x T (gradient accumulation)\n"
               "  --lr X                peak learning rate (default 1e-3)\n"
               "  --warmup N            linear warm-up steps (default 100)\n"
               "  --schedule S          cosine | linear | constant (default cosine)\n"
               "  --min-lr-ratio X      floor of the decay as a fraction of --lr (default 0.1)\n"
               "  --weight-decay X      AdamW decoupled decay on matrices (default 0.1)\n"
               "  --beta1 X --beta2 X   AdamW betas (default 0.9, 0.95)\n"
               "  --grad-clip X         clip the global gradient norm (default 1.0; 0 disables)\n"
               "  --seed N              initialisation and data order (default 1)\n"
               "  --mix niah=F,mqar=G   replace these fractions of the training rows with generated retrieval\n"
               "                        tasks (needle in a haystack, associative recall; docs/EXPERIMENTS.md)\n"
               "  --eval-every N        validation loss every N steps (default 100)\n"
               "  --eval-batches N      validation micro-batches per evaluation (default 16)\n"
               "  --checkpoint-every N  checkpoint every N steps and at the end (default 500)\n"
               "  --keep-checkpoints N  checkpoints kept (default 2)\n"
               "  --log-every N         progress line every N steps (default 1)\n"
               "  --resume              continue from RUN_DIR's latest checkpoint\n"
               "  --quiet               no progress lines",
               run_train);

}  // namespace difftx::cli
