#include "cli/train_options.h"

#include <cstdio>
#include <string>

#include "data/tasks/mixture_spec.h"

namespace difftx::cli {
namespace {


// AdamW's betas: moment decay rates in [0, 1) (1 would never forget, and divide by zero in the
// bias correction 1 - beta^t).
constexpr NumberRange kBeta{0, 1, false, true};

}  // namespace

void read_train_options(Args& args, train::TrainOptions& o) {
  o.spelling = OptionSpelling::flag;
  o.seq_len = args.get_int("seq-len", o.seq_len, kSequenceLength);
  o.micro_batch = args.get_int("micro-batch", o.micro_batch, kMicroBatch);
  o.batch_tokens = args.get_int("batch-tokens", o.batch_tokens, kNonNegative);
  o.lr = args.get_double("lr", o.lr, kPositiveNumber);
  o.min_lr_ratio = args.get_double("min-lr-ratio", o.min_lr_ratio, kFraction);
  o.warmup_steps = args.get_int("warmup", o.warmup_steps, kNonNegative);
  if (const auto schedule = args.get("schedule")) o.schedule = train::decay_shape_from_name(*schedule);
  o.adamw.weight_decay = args.get_double("weight-decay", o.adamw.weight_decay, NumberRange{0, 1e300});
  o.adamw.grad_clip = args.get_double("grad-clip", o.adamw.grad_clip, NumberRange{0, 1e300});
  o.adamw.beta1 = args.get_double("beta1", o.adamw.beta1, kBeta);
  o.adamw.beta2 = args.get_double("beta2", o.adamw.beta2, kBeta);
  o.seed = static_cast<uint64_t>(args.get_int("seed", static_cast<int64_t>(o.seed), kAnySeed));
  if (const auto mix = args.get("mix")) o.mixture = retrieval::parse_mixture(*mix, OptionSpelling::flag);
  o.eval_every = args.get_int("eval-every", o.eval_every, kNonNegative);
  o.eval_batches = args.get_int("eval-batches", o.eval_batches, kNonNegative);
  o.checkpoint_every = args.get_int("checkpoint-every", o.checkpoint_every, kNonNegative);
  o.keep_checkpoints = static_cast<int>(args.get_int("keep-checkpoints", o.keep_checkpoints, IntRange{1, 1000}));
  o.log_every = args.get_int("log-every", o.log_every, kPositive);
}

std::string train_options_help(const train::TrainOptions& o) {
  using train::DecayShape;
  const char* shape = o.schedule == DecayShape::cosine ? "cosine" : o.schedule == DecayShape::linear ? "linear" : "constant";
  std::string mix = "none";
  if (!o.mixture.empty()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "niah=%g,mqar=%g", o.mixture.niah, o.mixture.mqar);
    mix = buf;
  }
  char buf[2600];
  std::snprintf(
      buf, sizeof buf,
      "  --seq-len T           tokens per sequence (default %lld)\n"
      "  --micro-batch B       sequences per forward/backward on each rank (default %lld)\n"
      "  --batch-tokens N      tokens per optimizer step over all ranks, a multiple of ranks x B x T\n"
      "                        (gradient accumulation; default one micro-batch per rank)\n"
      "  --lr X                peak learning rate (default %g)\n"
      "  --warmup N            linear warm-up steps (default %lld)\n"
      "  --schedule S          cosine | linear | constant (default %s)\n"
      "  --min-lr-ratio X      floor of the decay as a fraction of --lr (default %g)\n"
      "  --weight-decay X      AdamW decoupled decay on matrices (default %g)\n"
      "  --beta1 X --beta2 X   AdamW betas (default %g, %g)\n"
      "  --grad-clip X         clip the global gradient norm (default %g; 0 disables)\n"
      "  --seed N              initialisation and data order (default %llu)\n"
      "  --mix niah=F,mqar=G   replace these fractions of the training rows with generated retrieval\n"
      "                        tasks (needle in a haystack, associative recall; docs/EXPERIMENTS.md)\n"
      "                        (default %s)\n"
      "  --eval-every N        validation loss every N steps (default %lld; 0: only at the end)\n"
      "  --eval-batches N      validation micro-batches per evaluation and rank (default %lld; 0: none)\n"
      "  --checkpoint-every N  checkpoint every N steps and at the end (default %lld; 0: only at the end)\n"
      "  --keep-checkpoints N  checkpoints kept, 1 to 1000 (default %d)\n"
      "  --log-every N         progress line every N steps (default %lld)\n",
      (long long)o.seq_len, (long long)o.micro_batch, o.lr, (long long)o.warmup_steps, shape, o.min_lr_ratio,
      o.adamw.weight_decay, o.adamw.beta1, o.adamw.beta2, o.adamw.grad_clip, (unsigned long long)o.seed, mix.c_str(),
      (long long)o.eval_every, (long long)o.eval_batches, (long long)o.checkpoint_every, o.keep_checkpoints,
      (long long)o.log_every);
  return buf;
}

}  // namespace difftx::cli
