// The analyses of `difftx analyze` and `difftx eval` on a loaded model and a prepared dataset,
// with the CLI's defaults, returning the results schema's JSON objects (results/results.h,
// docs/EXPERIMENTS.md) as dicts. Ctrl-C is checked after every task, batch, episode or prompt.
#include <nlohmann/json.hpp>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "api/analyses.h"
#include "bindings.h"
#include "eval/outliers.h"

namespace difftx::python {
namespace {

namespace fs = std::filesystem;

// Runs f with the GIL released; Ctrl-C raises KeyboardInterrupt after the task, batch, episode or
// prompt it came in; the result goes back as a Python object.
template <typename F>
py::object compute(F f) {
  nlohmann::json result;
  {
    GilReleased release;
    result = f();
  }
  return to_python(result);
}

py::object niah(const ModelHandle& m, const fs::path& data_dir, std::vector<int64_t> contexts,
                std::vector<int64_t> needles, std::vector<int64_t> queried, std::vector<double> depths,
                int64_t samples, uint64_t seed, int value_digits, const std::string& split) {
  const retrieval::NiahGrid grid{contexts, needles, queried, depths, samples, seed, value_digits};
  return compute([&] { return api::niah(*m, data_dir, grid, split, check_signals); });
}

py::object mqar(const ModelHandle& m, const fs::path& data_dir, int64_t pairs, int64_t queries, int64_t samples,
                uint64_t seed) {
  retrieval::MqarEvalOptions o;
  o.spec = {pairs, queries};
  o.samples = samples;
  o.seed = seed;
  return compute([&] { return api::mqar(*m, data_dir, o, check_signals); });
}

py::object attention(const ModelHandle& m, const fs::path& data_dir, int64_t context, int64_t needles,
                     std::vector<double> depths, int64_t per_depth, uint64_t seed, int64_t map_layer,
                     int64_t map_head) {
  retrieval::NiahPromptOptions o;
  o.context = context;
  o.needles = needles;
  o.depths = depths;
  o.per_depth = per_depth;
  o.seed = seed;
  return compute([&] { return api::attention(*m, data_dir, o, map_layer, map_head, check_signals); });
}

py::object outliers(const ModelHandle& m, const fs::path& data_dir, int64_t tokens, int64_t seq_len,
                    int64_t micro_batch) {
  return compute([&] { return api::outliers(*m, data_dir, tokens, {seq_len, micro_batch}, check_signals); });
}

py::object quant(const ModelHandle& m, const fs::path& data_dir, const std::vector<int>& bits, int64_t seq_len,
                 int64_t micro_batch, int64_t max_batches) {
  return compute([&] { return api::quant(*m, data_dir, bits, {seq_len, micro_batch}, max_batches, check_signals); });
}

py::object evaluate(const ModelHandle& m, const fs::path& data_dir, int64_t seq_len, int64_t micro_batch,
                    int64_t max_batches) {
  return compute([&] { return api::evaluate(*m, data_dir, {seq_len, micro_batch}, max_batches, check_signals); });
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
  m.def("outliers", &outliers, py::arg("model"), py::arg("data"), py::kw_only(),
        py::arg("tokens") = eval::OutlierOptions{}.tokens, py::arg("seq_len") = 256, py::arg("micro_batch") = 8,
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
