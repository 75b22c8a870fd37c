#include "report/results.h"

#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"
#include "io/json_field.h"
#include "io/json_file.h"

namespace difftx::report {
namespace {

Setup parse_setup(const JsonField& j) {
  Setup s;
  s.preset = j.at("preset").string();
  s.tokens_per_model = j.at("tokens_per_model").integer();
  s.seed = j.at("seed").integer();
  s.seq_len = j.at("seq_len").integer();
  s.micro_batch = j.at("micro_batch").integer();
  s.lr = j.at("lr").number();
  s.data = j.at("data").string();
  s.tokenizer = j.at("tokenizer").string();
  s.machine = j.at("machine").string();
  const JsonField mixture = j.at("mixture");
  mixture.expect_object();
  for (const auto& [task, fraction] : mixture.value().items()) s.mixture[task] = mixture.at(task).number();
  return s;
}

std::vector<LossPoint> parse_curve(const JsonField& j, const char* loss_key) {
  std::vector<LossPoint> out(j.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const JsonField p = j[i];
    out[i] = {p.at("step").integer(), p.at("tokens").number(), p.at(loss_key).number()};
  }
  return out;
}

TrainResults parse_train(const JsonField& j) {
  TrainResults t;
  t.tokens = j.at("tokens").number();
  t.seconds = j.at("seconds").number();
  t.tokens_per_second = j.at("tokens_per_second").number();
  t.final_train_loss = j.at("final_train_loss").number();
  t.final_val_loss = j.at("final_val_loss").number();
  t.curve = parse_curve(j.at("curve"), "loss");
  t.val_curve = parse_curve(j.at("val_curve"), "val_loss");
  return t;
}

NiahResults parse_niah(const JsonField& j) {
  NiahResults n;
  n.samples_per_cell = j.at("samples_per_cell").integer();
  const JsonField cells = j.at("cells");
  for (size_t i = 0; i < cells.size(); ++i) {
    const JsonField c = cells[i];
    n.cells.push_back({c.at("context").integer(), c.at("needles").integer(), c.at("queried").integer(),
                       c.at("depth").number(), c.at("accuracy").number(), c.at("samples").integer()});
  }
  return n;
}

MqarResults parse_mqar(const JsonField& j) {
  return {j.at("accuracy").number(), j.at("samples").integer(), j.at("pairs").integer(), j.at("queries").integer()};
}

std::vector<AllocationPoint> parse_allocation_points(const std::optional<JsonField>& j, const char* key) {
  std::vector<AllocationPoint> out;
  if (!j) return out;
  for (size_t i = 0; i < j->size(); ++i) {
    const JsonField p = (*j)[i];
    out.push_back({p.at(key).number(), p.at("answer").number(), p.at("noise").number()});
  }
  return out;
}

AttentionAllocation parse_allocation(const JsonField& j) {
  AttentionAllocation a;
  a.normalisation = j.at("normalisation").string();
  a.by_depth = parse_allocation_points(j.find("by_depth"), "depth");
  a.by_layer = parse_allocation_points(j.find("by_layer"), "layer");
  return a;
}

OutlierStats parse_outlier_stats(const JsonField& j) {
  return {j.at("top1").number(), j.at("top2").number(), j.at("top3").number(), j.at("median").number()};
}

Outliers parse_outliers(const JsonField& j) {
  return {j.at("tokens").integer(), parse_outlier_stats(j.at("attention_logits")),
          parse_outlier_stats(j.at("hidden_states"))};
}

std::vector<QuantizationPoint> parse_quantization(const JsonField& j) {
  std::vector<QuantizationPoint> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const JsonField p = j[i];
    const auto accuracy = p.find("niah_accuracy");
    out.push_back({p.at("bits").integer(), p.at("val_loss").number(),
                   accuracy ? accuracy->number() : std::numeric_limits<double>::quiet_NaN()});
  }
  return out;
}

AttentionMap parse_attention_map(const JsonField& j) {
  AttentionMap m;
  m.layer = j.at("layer").integer();
  m.head = j.at("head").integer();
  m.query_position = j.at("query_position").integer();
  const JsonField tokens = j.at("tokens"), weights = j.at("weights"), span = j.at("answer_span");
  for (size_t i = 0; i < tokens.size(); ++i) m.tokens.push_back(tokens[i].string());
  for (size_t i = 0; i < weights.size(); ++i) m.weights.push_back(weights[i].number());
  DIFFTX_CHECK(!m.tokens.empty() && m.tokens.size() == m.weights.size(), weights.where(), ": ", m.weights.size(),
               " weights for ", m.tokens.size(), " tokens (expected one weight per token, at least one)");
  DIFFTX_CHECK(span.size() == 2, span.where(), ": expected [begin, end), got ", span.size(), " numbers");
  m.answer_begin = span[0].integer();
  m.answer_end = span[1].integer();
  DIFFTX_CHECK(
      0 <= m.answer_begin && m.answer_begin < m.answer_end && m.answer_end <= static_cast<int64_t>(m.tokens.size()),
      span.where(), ": [", m.answer_begin, ", ", m.answer_end, ") is not a non-empty span inside the ", m.tokens.size(),
      " tokens");
  return m;
}

int64_t optional_config_int(const std::optional<JsonField>& config, const char* key) {
  if (!config) return 0;
  const auto v = config->find(key);
  return v ? v->integer() : 0;
}

ModelResults parse_model(const JsonField& j) {
  ModelResults m;
  m.name = j.at("name").string();
  m.attention = j.at("attention").string();
  m.parameters = j.at("parameters").integer();
  if (const auto dir = j.find("run_dir")) m.run_dir = dir->string();
  const auto config = j.find("config");
  if (config) config->expect_object();
  m.hidden_size = optional_config_int(config, "hidden_size");
  m.layers = optional_config_int(config, "num_hidden_layers");
  m.heads = optional_config_int(config, "num_attention_heads");
  m.train = parse_train(j.at("train"));
  if (const auto v = j.find("niah")) m.niah = parse_niah(*v);
  if (const auto v = j.find("mqar")) m.mqar = parse_mqar(*v);
  if (const auto v = j.find("attention_allocation")) m.attention_allocation = parse_allocation(*v);
  if (const auto v = j.find("outliers")) m.outliers = parse_outliers(*v);
  if (const auto v = j.find("quantization")) m.quantization = parse_quantization(*v);
  if (const auto v = j.find("attention_map")) m.attention_map = parse_attention_map(*v);
  return m;
}

}  // namespace

ExperimentResults parse_experiment_results(const nlohmann::json& document, const std::string& source) {
  const JsonField root(document, source);
  ExperimentResults r;
  r.schema = root.at("schema").string();
  DIFFTX_CHECK(r.schema == kResultsSchema, root.at("schema").where(), ": expected \"", kResultsSchema, "\", got \"",
               r.schema, "\"");
  r.created = root.at("created").string();
  r.setup = parse_setup(root.at("setup"));
  const JsonField models = root.at("models");
  DIFFTX_CHECK(models.size() > 0, models.where(), ": no models");
  std::set<std::string> names;
  for (size_t i = 0; i < models.size(); ++i) {
    r.models.push_back(parse_model(models[i]));
    DIFFTX_CHECK(names.insert(r.models.back().name).second, models[i].at("name").where(), ": model name \"",
                 r.models.back().name, "\" is used twice");
  }
  return r;
}

ExperimentResults read_experiment_results(const std::filesystem::path& path) {
  return parse_experiment_results(read_json_file(path), path.string());
}

double mean_niah_accuracy(const NiahResults& niah) {
  double sum = 0;
  int64_t n = 0;
  for (const auto& c : niah.cells)
    if (std::isfinite(c.accuracy)) sum += c.accuracy, ++n;
  return n > 0 ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace difftx::report
