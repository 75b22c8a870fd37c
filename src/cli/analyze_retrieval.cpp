// `difftx analyze niah` and `difftx analyze mqar`: retrieval accuracy of a model directory on
// generated tasks (generators in src/data/tasks, evaluators in src/eval/retrieval), a table on
// stdout and the results-schema object in --json.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "api/analyses.h"
#include "cli/analyze_targets.h"
#include "core/error.h"
#include "data/split_reader.h"
#include "eval/logits_forward.h"
#include "eval/retrieval/mqar_eval.h"
#include "eval/retrieval/niah_eval.h"
#include "io/json_file.h"
#include "model/model_io.h"

namespace difftx::cli {
namespace {

using namespace difftx::eval;  // the analyses this command runs

namespace fs = std::filesystem;

std::string describe(const fs::path& model_dir, const model::ModelConfig& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "model %s (%s, %.2fM parameters, max_position_embeddings %lld)",
                model_dir.string().c_str(), kernels::attention_kind_name(c.attention), c.total_parameters() / 1e6,
                (long long)c.max_position_embeddings);
  return buf;
}

}  // namespace

int analyze_niah(Args& args) {
  const fs::path model_dir = args.require("model");
  const fs::path data_dir = args.require("data");
  retrieval::NiahGrid grid;
  grid.contexts = args.get_int_list("contexts", "256", kSequenceLength);
  grid.needles = args.get_int_list("needles", "1,2,4,6", kPositive);
  grid.queried = args.get_int_list("queried", "1,2", kPositive);
  grid.depths = args.get_double_list("depths", "0,0.25,0.5,0.75,1", kFraction);
  grid.samples = args.get_int("samples", grid.samples, kPositive);
  grid.seed = static_cast<uint64_t>(args.get_int("seed", static_cast<int64_t>(grid.seed), kAnySeed));
  grid.value_digits = static_cast<int>(args.get_int("value-digits", grid.value_digits, IntRange{1, 9}));
  const std::string split = args.get("split", "val");
  const auto json_path = args.get("json");
  const bool quiet = args.flag("quiet");
  args.finish();

  const model::Model model = model::load_model_dir(model_dir);
  const data::Tokenizer tokenizer = api::dataset_tokenizer(data_dir, model_dir, model.config);
  const data::SplitReader haystack(data_dir, split);
  const retrieval::NiahGenerator generator(tokenizer, haystack);
  std::function<void(const retrieval::NiahProgress&)> progress;
  if (!quiet)
    progress = [](const retrieval::NiahProgress& p) {
      const double eta = p.seconds / p.tasks_done * (p.tasks_total - p.tasks_done);
      std::fprintf(stderr, "\rniah task %lld/%lld | %.1f tasks/s | ETA %.0f s   ", (long long)p.tasks_done,
                   (long long)p.tasks_total, p.tasks_done / std::max(p.seconds, 1e-9), eta);
      if (p.tasks_done == p.tasks_total) std::fprintf(stderr, "\n");
      std::fflush(stderr);
    };
  const retrieval::NiahResult r = retrieval::evaluate_niah(model_forward(model), generator, grid, progress);

  const results::NiahResults niah = retrieval::niah_results(r);
  std::printf("NIAH, %s\nhaystacks: split '%s' of %s; %lld tasks per cell; %d-digit values; seed %llu\n"
              "accuracy: queried needles whose value greedy decoding reproduces exactly\n%s"
              "mean accuracy %.3f (%.1f s)\n",
              describe(model_dir, model.config).c_str(), split.c_str(), data_dir.string().c_str(),
              (long long)grid.samples, grid.value_digits, (unsigned long long)grid.seed,
              retrieval::niah_table(r).c_str(), niah.mean_accuracy, r.seconds);
  if (json_path) {
    nlohmann::json j = results::to_json(niah);
    j["model"] = model_dir.string();
    io::write_json_file(*json_path, j);
  }
  return 0;
}

int analyze_mqar(Args& args) {
  const fs::path model_dir = args.require("model");
  const fs::path data_dir = args.require("data");
  retrieval::MqarEvalOptions o;
  o.spec.pairs = args.get_int("pairs", o.spec.pairs, kPositive);
  o.spec.queries = args.get_int("queries", o.spec.queries, kPositive);
  o.samples = args.get_int("samples", o.samples, kPositive);
  o.seed = static_cast<uint64_t>(args.get_int("seed", static_cast<int64_t>(o.seed), kAnySeed));
  const auto json_path = args.get("json");
  args.finish();

  const model::Model model = model::load_model_dir(model_dir);
  const data::Tokenizer tokenizer = api::dataset_tokenizer(data_dir, model_dir, model.config);
  const retrieval::MqarResult r = retrieval::evaluate_mqar(model_forward(model), retrieval::mqar_vocabulary(tokenizer),
                                                           tokenizer.vocab_size(), o);
  std::printf("MQAR, %s\n%lld episodes of %lld pairs and %lld queries (%lld tokens); seed %llu\n"
              "accuracy %.3f (%lld of %lld answers) | answer loss %.3f nats | chance 1/%lld | %.1f s\n",
              describe(model_dir, model.config).c_str(), (long long)o.samples, (long long)o.spec.pairs,
              (long long)o.spec.queries, (long long)retrieval::mqar_length(o.spec), (unsigned long long)o.seed,
              r.accuracy(), (long long)r.correct, (long long)r.answers, r.loss, (long long)o.spec.pairs, r.seconds);
  if (json_path) {
    nlohmann::json j = results::to_json(retrieval::mqar_results(r));
    j["model"] = model_dir.string();
    j["data"] = data_dir.string();
    io::write_json_file(*json_path, j);
  }
  return 0;
}

}  // namespace difftx::cli
