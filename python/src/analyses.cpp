// The analyses of `difftx analyze` and `difftx eval` on a loaded model and a prepared dataset,
// with the CLI's defaults, returning the results schema's JSON objects (results/results.h,
// docs/EXPERIMENTS.md) as dicts. Ctrl-C is checked after every task or batch.
#include <nlohmann/json.hpp>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "bindings.h"
#include "core/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/split_reader.h"
#include "data/tokenizer_files.h"
#include "eval/analysis_results.h"
#include "eval/attention_allocation.h"
#include "eval/logits_forward.h"
#include "eval/outliers.h"
#include "eval/perplexity.h"
#include "eval/quantization.h"
#include "eval/retrieval/mqar_eval.h"
#include "eval/retrieval/niah_eval.h"
#include "eval/retrieval/niah_prompts.h"
#include "kernels/attention/attention_quantized.h"

namespace difftx::python {
namespace {

namespace fs = std::filesystem;

// The prepared dataset's own tokenizer, which must fit the model (as `difftx analyze` takes it).
data::Tokenizer dataset_tokenizer(const fs::path& data_dir, const LoadedModel& m) {
  data::check_fits_vocabulary(data::read_dataset(data_dir), m.model.config.vocab_size,
                              "the model in " + m.dir.string());
  return data::load_tokenizer(data_dir.string());
}

// Runs f with the GIL released on the model's threads; the result goes back as a Python object.
template <typename F>
py::object compute(const LoadedModel& m, F f) {
  nlohmann::json result;
  {
    py::gil_scoped_release release;
    ThreadScope scope(m.threads);
    result = f();
  }
  return to_python(result);
}

py::object niah(const ModelHandle& m, const fs::path& data_dir, std::vector<int64_t> contexts,
                std::vector<int64_t> needles, std::vector<int64_t> queried, std::vector<double> depths,
                int64_t samples, uint64_t seed, int value_digits, const std::string& split) {
  const retrieval::NiahGrid grid{contexts, needles, queried, depths, samples, seed, value_digits};
  return compute(*m, [&] {
    const data::Tokenizer tokenizer = dataset_tokenizer(data_dir, *m);
    const data::SplitReader haystack(data_dir, split);
    const retrieval::NiahGenerator generator(tokenizer, haystack);
    const auto r = retrieval::evaluate_niah(model_forward(m->model), generator, grid,
                                            [](const retrieval::NiahProgress&) { check_signals(); });
    return results::to_json(retrieval::niah_results(r));
  });
}

py::object mqar(const ModelHandle& m, const fs::path& data_dir, int64_t pairs, int64_t queries, int64_t samples,
                uint64_t seed) {
  retrieval::MqarEvalOptions o;
  o.spec = {pairs, queries};
  o.samples = samples;
  o.seed = seed;
  return compute(*m, [&] {
    const data::Tokenizer tokenizer = dataset_tokenizer(data_dir, *m);
    const auto r = retrieval::evaluate_mqar(model_forward(m->model), retrieval::mqar_vocabulary(tokenizer),
                                            tokenizer.vocab_size(), o);
    return results::to_json(retrieval::mqar_results(r));
  });
}

py::object attention(const ModelHandle& m, const fs::path& data_dir, int64_t context, int64_t needles,
                     std::vector<double> depths, int64_t per_depth, uint64_t seed, int64_t map_layer,
                     int64_t map_head) {
  const ModelConfig& c = m->model.config;
  DIFFTX_CHECK(map_layer >= -1 && map_layer < c.num_hidden_layers, "map_layer ", map_layer, " outside [0, ",
               c.num_hidden_layers, ") (or -1 for the mean over layers)");
  DIFFTX_CHECK(map_head >= -1 && map_head < c.num_attention_heads, "map_head ", map_head, " outside [0, ",
               c.num_attention_heads, ") (or -1 for the mean over heads)");
  retrieval::NiahPromptOptions o;
  o.context = context;
  o.needles = needles;
  o.depths = depths;
  o.per_depth = per_depth;
  o.seed = seed;
  return compute(*m, [&] {
    const data::Tokenizer tokenizer = dataset_tokenizer(data_dir, *m);
    const data::SplitReader haystack(data_dir, "val");
    const std::vector<AllocationPrompt> prompts =
        retrieval::niah_allocation_prompts(retrieval::NiahGenerator(tokenizer, haystack), o);
    const AttentionAnalysis a = analyse_attention(m->model, prompts, map_layer, map_head);
    const AllocationPrompt& p = prompts[a.figure_prompt];
    const std::vector<int32_t> seen(p.tokens.begin(), p.tokens.begin() + p.query_position + 1);
    nlohmann::json j = results::to_json(results::Analyses{
        .attention_allocation = allocation_results(a.summary),
        .attention_map = attention_map_results(p, map_layer, map_head, a.figure_weights, token_strings(tokenizer, seen))});
    j["attention_map"]["ids"] = seen;  // the prompt's ids, for attention_map() and taps()
    return j;
  });
}

py::object outliers(const ModelHandle& m, const fs::path& data_dir, int64_t tokens, int64_t seq_len,
                    int64_t micro_batch) {
  OutlierOptions o;
  o.tokens = tokens;
  o.progress = [](int, int64_t, int64_t) { check_signals(); };
  return compute(*m, [&] {
    data::TokenLoader val = data::sequential_loader(data_dir, "val", micro_batch, seq_len);
    return results::to_json(outlier_results(measure_outliers(m->model, val, o)));
  });
}

py::object quant(const ModelHandle& m, const fs::path& data_dir, const std::vector<int>& bits, int64_t seq_len,
                 int64_t micro_batch, int64_t max_batches) {
  for (int b : bits) check_logit_bits(b);
  PerplexityOptions o;
  o.max_batches = max_batches;
  o.progress = [](const PerplexityProgress&) { check_signals(); };
  return compute(*m, [&] {
    data::TokenLoader val = data::sequential_loader(data_dir, "val", micro_batch, seq_len);
    return results::to_json(quantization_sweep(m->model, val, bits, o));
  });
}

py::object evaluate(const ModelHandle& m, const fs::path& data_dir, int64_t seq_len, int64_t micro_batch,
                    int64_t max_batches) {
  PerplexityOptions o;
  o.max_batches = max_batches;
  o.progress = [](const PerplexityProgress&) { check_signals(); };
  return compute(*m, [&] {
    data::TokenLoader val = data::sequential_loader(data_dir, "val", micro_batch, seq_len);
    const PerplexityResult r = evaluate_perplexity(m->model, val, o);
    return nlohmann::json{{"val_loss", r.loss}, {"perplexity", r.perplexity}, {"tokens", r.tokens},
                          {"batches", r.batches}, {"seconds", r.seconds}};
  });
}

}  // namespace

void bind_analyses(py::module_& m) {
  const retrieval::NiahGrid grid;
  const retrieval::NiahPromptOptions prompts;
  const retrieval::MqarEvalOptions mqar_defaults;
  m.def("niah", &niah, py::arg("model"), py::arg("data"), py::kw_only(), py::arg("contexts") = grid.contexts,
        py::arg("needles") = grid.needles, py::arg("queried") = grid.queried, py::arg("depths") = grid.depths,
        py::arg("samples") = grid.samples, py::arg("seed") = grid.seed, py::arg("value_digits") = grid.value_digits,
        py::arg("split") = "val",
        "Multi-needle retrieval (paper Table 2) as `difftx analyze niah`: the results.json 'niah' object.");
  m.def("mqar", &mqar, py::arg("model"), py::arg("data"), py::kw_only(), py::arg("pairs") = mqar_defaults.spec.pairs,
        py::arg("queries") = mqar_defaults.spec.queries, py::arg("samples") = mqar_defaults.samples,
        py::arg("seed") = mqar_defaults.seed,
        "Multi-query associative recall as `difftx analyze mqar`: the results.json 'mqar' object.");
  m.def("attention", &attention, py::arg("model"), py::arg("data"), py::kw_only(),
        py::arg("context") = prompts.context, py::arg("needles") = prompts.needles,
        py::arg("depths") = prompts.depths, py::arg("per_depth") = prompts.per_depth, py::arg("seed") = prompts.seed,
        py::arg("map_layer") = -1, py::arg("map_head") = -1,
        "Attention on the answer vs the noise (Table 3) and a Figure-1 row, as `difftx analyze attention`:\n"
        "{'attention_allocation': ..., 'attention_map': ...} as in results.json; attention_map also has\n"
        "'ids', the prompt's token ids up to the query.");
  m.def("outliers", &outliers, py::arg("model"), py::arg("data"), py::kw_only(), py::arg("tokens") = OutlierOptions{}.tokens,
        py::arg("seq_len") = 256, py::arg("micro_batch") = 8,
        "Activation outliers (Table 5) as `difftx analyze outliers`: the results.json 'outliers' object.");
  m.def("quant", &quant, py::arg("model"), py::arg("data"), py::kw_only(),
        py::arg("bits") = std::vector<int>{0, 16, 8, 6, 4}, py::arg("seq_len") = 256, py::arg("micro_batch") = 8,
        py::arg("max_batches") = 0,
        "Val loss with fake-quantized attention logits (Figure 8) as `difftx analyze quant`: the\n"
        "results.json 'quantization' list.");
  m.def("eval", &evaluate, py::arg("model"), py::arg("data"), py::kw_only(), py::arg("seq_len") = 256,
        py::arg("micro_batch") = 8, py::arg("max_batches") = 0,
        "Validation loss and perplexity as `difftx eval`: {'val_loss', 'perplexity', 'tokens', 'batches',\n"
        "'seconds'}.");
}

}  // namespace difftx::python
