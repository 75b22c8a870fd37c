// `difftx init`: a model directory with freshly initialised weights (docs/MODEL.md
// "Initialisation") for a config.json of any format, e.g. a 1B-parameter shape for benchmarks.
#include <cstdio>

#include "cli/command.h"
#include "cli/model_output.h"
#include "core/error.h"
#include "io/json_file.h"
#include "model/initial_weights.h"
#include "model/model_io.h"

namespace difftx::cli {
namespace {

int run_init(Args& args) {
  const std::string config_path = args.require("config");
  const model::ModelOutput out = model_output_options(args);
  const int64_t seed = args.get_int("seed", 1, kAnySeed);
  args.finish();
  const nlohmann::json config = io::read_json_file(config_path);
  const model::InitialWeights weights(model::model_config_from_json(config, config_path), static_cast<uint64_t>(seed));
  model::write_model(weights, out);  // a tensor at a time: never the whole model in memory
  model::carry_token_ids(config, out.dir);
  std::printf("wrote %s (%s, %s, %.3fM parameters, seed %lld)\n", out.dir.string().c_str(), out.format.c_str(),
              kernels::weight_type_name(out.dtype), weights.config().total_parameters() / 1e6,
              static_cast<long long>(seed));
  return 0;
}

}  // namespace

DIFFTX_COMMAND("init", "write a model directory with randomly initialised weights",
               std::string("  --config FILE      a config.json: difftx's, or Hugging Face llama / diffllama\n") +
                   kModelOutputUsage + "  --seed N           initialisation seed (default 1)",
               run_init);

}  // namespace difftx::cli
