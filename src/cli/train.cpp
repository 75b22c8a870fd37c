// `difftx train`: train a model from scratch (or resume) on prepared token shards, in one
// process or data parallel under mpirun (docs/DISTRIBUTED.md).
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/train_options.h"
#include "core/error.h"
#include "dist/launch.h"
#include "dist/stop_signal.h"
#include "dist/watchdog.h"
#include "train/trainer.h"

namespace difftx::cli {
namespace {

int run_train(Args& args) {
  train::TrainOptions o;
  if (args.get("init")) o.init_dir = args.require("init");  // given: a non-empty path
  // With --init the config is the model's own unless --config names one (which must match it).
  o.config_path = o.init_dir.empty() ? args.require("config")
                                     : args.get("config", (std::filesystem::path(o.init_dir) / "config.json").string());
  o.data_dir = args.require("data");
  o.out_dir = args.require("out");
  o.steps = args.get_int("steps", o.steps, kPositive);
  read_train_options(args, o);
  o.resume = args.flag("resume");
  o.quiet = args.flag("quiet");
  o.bucket_floats = static_cast<int64_t>(args.get_double("bucket-mb", 16.0, NumberRange{0, 1 << 20, true}) * (1 << 20) / sizeof(float));
  o.check_replicas = args.flag("check-replicas");
  const dist::Launch launch = dist::launch_from_name(args.get("dist", "auto"));
  const double timeout = args.get_double("collective-timeout", 600.0, kPositiveNumber);
  args.finish();

  std::unique_ptr<dist::Communicator> comm = dist::open_communicator(launch);
  if (comm->size() > 1) {
    comm = std::make_unique<dist::WatchdogCommunicator>(std::move(comm), timeout);
    dist::explain_sigterm(comm->rank(), comm->size());
  }
  train::TrainSummary s;
  try {
    s = train::train(o, *comm);
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
  if (comm->rank() == 0) {
    char val[48] = "not measured";
    if (!std::isnan(s.last_val_loss)) std::snprintf(val, sizeof val, "%.4f", s.last_val_loss);
    std::printf("done: %lld steps, train loss %.4f, val loss %s, %.0f tok/s, MFU %.1f%%\n", (long long)s.steps_done,
                s.last_train_loss, val, s.tokens_per_second, 100 * s.mfu);
  }
  return 0;
}

}  // namespace

DIFFTX_COMMAND("train", "train a baseline, DIFF V1 or DIFF V2 model on prepared shards",
               "  --config FILE         model config.json (see configs/)\n"
               "  --init MODEL_DIR      start from this model's weights (a checkpoint, a Hugging Face\n"
               "                        directory) with a fresh optimizer: fine-tuning, or a second stage\n"
               "                        at a longer --seq-len; --config defaults to its config.json\n"
               "  --data DIR            prepared data (difftx prepare)\n"
               "  --out RUN_DIR         checkpoints/, metrics.jsonl, run.json\n"
               "  --steps N             optimizer steps (default 1000)\n" +
                   train_options_help(train::TrainOptions{}) +
               "  --resume              continue from RUN_DIR's latest checkpoint\n"
               "  --quiet               no progress lines\n"
               "data parallelism (mpirun -np N difftx train ...; docs/DISTRIBUTED.md):\n"
               "  --dist MODE           auto (MPI when started by mpirun) | local | mpi (default auto)\n"
               "  --collective-timeout S  stop when a rank waits S seconds for the others (default 600)\n"
               "  --bucket-mb X         gradient bucket size in MiB (default 16)\n"
               "  --check-replicas      compare every rank's parameters after every step",
               run_train);

}  // namespace difftx::cli
