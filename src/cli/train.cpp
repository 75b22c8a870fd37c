// `difftx train`: train a model from scratch (or resume) on prepared token shards, in one
// process or data parallel under mpirun (docs/DISTRIBUTED.md).
#include <cstdio>

#include "cli/command.h"
#include "core/error.h"
#include "dist/launch.h"
#include "dist/stop_signal.h"
#include "dist/watchdog.h"
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
  o.bucket_floats = static_cast<int64_t>(args.get_double("bucket-mb", 16.0) * (1 << 20) / sizeof(float));
  o.check_replicas = args.flag("check-replicas");
  const dist::Launch launch = dist::launch_from_name(args.get("dist", "auto"));
  const double timeout = args.get_double("collective-timeout", 600.0);
  DIFFTX_CHECK(timeout > 0, "--collective-timeout must be positive");
  args.finish();

  std::unique_ptr<dist::Communicator> comm = dist::open_communicator(launch);
  if (comm->size() > 1) {
    comm = std::make_unique<dist::WatchdogCommunicator>(std::move(comm), timeout);
    dist::explain_sigterm(comm->rank(), comm->size());
  }
  TrainSummary s;
  try {
    s = train(o, *comm);
  } catch (const dist::CollectiveError& e) {
    if (comm->size() == 1) throw;
    // Every rank raised it at the same point: rank 0 reports it, and all end normally.
    if (comm->rank() == 0) std::fprintf(stderr, "difftx train: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    if (comm->size() == 1) throw;
    // Other ranks may be waiting for this one in a collective: stop them all.
    std::fprintf(stderr, "difftx train: error: rank %d of %d: %s\n", comm->rank(), comm->size(), e.what());
    comm->abort(1);
  }
  if (comm->rank() == 0)
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
               "  --micro-batch B       sequences per forward/backward on each rank (default 8)\n"
               "  --batch-tokens N      tokens per optimizer step over all ranks, a multiple of ranks x B x T\n"
               "                        (gradient accumulation; default one micro-batch per rank)\n"
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
               "  --eval-batches N      validation micro-batches per evaluation and rank (default 16)\n"
               "  --checkpoint-every N  checkpoint every N steps and at the end (default 500)\n"
               "  --keep-checkpoints N  checkpoints kept (default 2)\n"
               "  --log-every N         progress line every N steps (default 1)\n"
               "  --resume              continue from RUN_DIR's latest checkpoint\n"
               "  --quiet               no progress lines\n"
               "data parallelism (mpirun -np N difftx train ...; docs/DISTRIBUTED.md):\n"
               "  --dist MODE           auto (MPI when started by mpirun) | local | mpi (default auto)\n"
               "  --collective-timeout S  stop when a rank waits S seconds for the others (default 600)\n"
               "  --bucket-mb X         gradient bucket size in MiB (default 16)\n"
               "  --check-replicas      compare every rank's parameters after every step",
               run_train);

}  // namespace difftx::cli
