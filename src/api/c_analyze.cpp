// The C API's analyses (include/difftx/difftx.h): one entry point, the analysis named, its
// options as JSON with the Python module's names and defaults, its results.json object back.
#include <cstdlib>
#include <cstring>

#include "api/analyses.h"
#include "api/c_api_internal.h"
#include "api/json_options.h"
#include "eval/outliers.h"

namespace difftx::api {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxBatchRows = int64_t{1} << 20;

ValWindows val_windows(JsonOptions& o) {
  ValWindows w;
  w.seq_len = o.integer("seq_len", w.seq_len, 1, kMaxDimension);
  w.micro_batch = o.integer("micro_batch", w.micro_batch, 1, kMaxBatchRows);
  return w;
}

nlohmann::json run_niah(const LoadedModel& m, const fs::path& data, JsonOptions& o) {
  retrieval::NiahGrid g;
  g.contexts = o.integers("contexts", g.contexts, 1, kMaxDimension);
  g.needles = o.integers("needles", g.needles, 1, kMaxCount);
  g.queried = o.integers("queried", g.queried, 1, kMaxCount);
  g.depths = o.numbers("depths", g.depths, 0, 1);
  g.samples = o.integer("samples", g.samples, 1, kMaxCount);
  g.seed = o.seed("seed", g.seed);
  g.value_digits = static_cast<int>(o.integer("value_digits", g.value_digits, 1, 9));
  const std::string split = o.string("split", "val");
  DIFFTX_CHECK(split == "val" || split == "train", "niah options: 'split' '", split.substr(0, 64),
               "' is not a split (val, train)");
  o.finish();
  return niah(m, data, g, split, {});
}

nlohmann::json run_mqar(const LoadedModel& m, const fs::path& data, JsonOptions& o) {
  retrieval::MqarEvalOptions q;
  q.spec.pairs = o.integer("pairs", q.spec.pairs, 1, kMaxCount);
  q.spec.queries = o.integer("queries", q.spec.queries, 1, kMaxCount);
  q.samples = o.integer("samples", q.samples, 1, kMaxCount);
  q.seed = o.seed("seed", q.seed);
  o.finish();
  return mqar(m, data, q, {});
}

nlohmann::json run_attention(const LoadedModel& m, const fs::path& data, JsonOptions& o) {
  retrieval::NiahPromptOptions p;
  p.context = o.integer("context", p.context, 1, kMaxDimension);
  p.needles = o.integer("needles", p.needles, 1, kMaxCount);
  p.depths = o.numbers("depths", p.depths, 0, 1);
  p.per_depth = o.integer("per_depth", p.per_depth, 1, kMaxCount);
  p.seed = o.seed("seed", p.seed);
  const int64_t layer = o.integer("map_layer", -1, -1, kMaxDimension);
  const int64_t head = o.integer("map_head", -1, -1, kMaxDimension);
  o.finish();
  return attention(m, data, p, layer, head, {});
}

nlohmann::json run_outliers(const LoadedModel& m, const fs::path& data, JsonOptions& o) {
  const int64_t tokens = o.integer("tokens", eval::OutlierOptions{}.tokens, 1, kMaxCount);
  const ValWindows w = val_windows(o);
  o.finish();
  return outliers(m, data, tokens, w, {});
}

nlohmann::json run_quant(const LoadedModel& m, const fs::path& data, JsonOptions& o) {
  std::vector<int> bits;
  for (int64_t b : o.integers("bits", {0, 16, 8, 6, 4}, 0, 64)) bits.push_back(static_cast<int>(b));
  const ValWindows w = val_windows(o);
  const int64_t max_batches = o.integer("max_batches", 0, 0, kMaxCount);
  o.finish();
  return quant(m, data, bits, w, max_batches, {});
}

nlohmann::json run_eval(const LoadedModel& m, const fs::path& data, JsonOptions& o) {
  const ValWindows w = val_windows(o);
  const int64_t max_batches = o.integer("max_batches", 0, 0, kMaxCount);
  o.finish();
  return evaluate(m, data, w, max_batches, {});
}

using Analysis = nlohmann::json (*)(const LoadedModel&, const fs::path&, JsonOptions&);
struct NamedAnalysis {
  const char* name;
  Analysis run;
};
constexpr NamedAnalysis kAnalyses[] = {{"niah", run_niah},         {"mqar", run_mqar},   {"attention", run_attention},
                                       {"outliers", run_outliers}, {"quant", run_quant}, {"eval", run_eval}};

Analysis find_analysis(const char* name) {
  std::string known;
  for (const NamedAnalysis& a : kAnalyses) {
    if (std::strcmp(a.name, name) == 0) return a.run;
    if (!known.empty()) known += ", ";
    known += a.name;
  }
  fail("analysis '", std::string(name).substr(0, 64), "' is not one (", known, ")");
}

}  // namespace
}  // namespace difftx::api

using namespace difftx;
using namespace difftx::api;

extern "C" {

char* difftx_analyze(difftx_model* model, const char* analysis, const char* data_dir, const char* options_json) {
  return guard<char*>(nullptr, [&] {
    const LoadedModel& m = model_of(model, "difftx_analyze");
    const Analysis run = find_analysis(required(analysis, "analysis"));
    JsonOptions options(options_json, std::string(analysis) + " options");
    const std::string text = run(m, required(data_dir, "data_dir"), options).dump();
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out == nullptr) throw std::bad_alloc();
    std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
  });
}

}  // extern "C"
