#include "results/results.h"

#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"
#include "io/json_file.h"
#include "results/statistics.h"

namespace difftx::results {

using io::JsonField;

namespace {

using nlohmann::json;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The extras (results.h): absent reads as NaN, 0 or "".
double optional_number(const JsonField& j, const char* key) {
  const auto v = j.find(key);
  return v ? v->number() : kNan;
}

int64_t optional_integer(const JsonField& j, const char* key) {
  const auto v = j.find(key);
  return v ? v->integer() : 0;
}

std::string optional_string(const JsonField& j, const char* key) {
  const auto v = j.find(key);
  return v ? v->string() : std::string();
}

json span_json(int64_t begin, int64_t end) { return json::array({begin, end}); }

json loss_curve_json(const std::vector<LossPoint>& curve, const char* loss_key) {
  json out = json::array();
  for (const LossPoint& p : curve) out.push_back({{"step", p.step}, {"tokens", p.tokens}, {loss_key, p.loss}});
  return out;
}

std::vector<LossPoint> parse_curve(const JsonField& j, const char* loss_key) {
  std::vector<LossPoint> out(j.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const JsonField p = j[i];
    out[i] = {p.at("step").integer(), p.at("tokens").integer(), p.at(loss_key).number()};
  }
  return out;
}

json allocation_fields(const Allocation& a) {
  return {{"answer", a.answer}, {"noise", a.noise}, {"noise_abs", a.noise_abs}};
}

Allocation parse_allocation_fields(const JsonField& j) {
  return {j.at("answer").number(), j.at("noise").number(), optional_number(j, "noise_abs")};
}

std::vector<AllocationPoint> parse_allocation_points(const std::optional<JsonField>& j, const char* key) {
  std::vector<AllocationPoint> out;
  if (!j) return out;
  for (size_t i = 0; i < j->size(); ++i) {
    const JsonField p = (*j)[i];
    out.push_back({p.at(key).number(), parse_allocation_fields(p)});
  }
  return out;
}

json outlier_stats_json(const OutlierStats& s) {
  return {{"top1", s.top1}, {"top2", s.top2}, {"top3", s.top3}, {"median", s.median}, {"count", s.count}};
}

OutlierStats parse_outlier_stats(const JsonField& j) {
  return {j.at("top1").number(), j.at("top2").number(), j.at("top3").number(), j.at("median").number(),
          optional_integer(j, "count")};
}

int64_t optional_config_int(const nlohmann::json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return 0;
  return JsonField(config, "config").at(key).integer();
}

}  // namespace

double mean_cell_accuracy(const NiahResults& niah) {
  double sum = 0;
  int64_t n = 0;
  for (const auto& c : niah.cells)
    if (std::isfinite(c.accuracy)) sum += c.accuracy, ++n;
  return n > 0 ? sum / static_cast<double>(n) : kNan;
}

double QuantizationPoint::niah_accuracy_or_nan() const { return niah_accuracy.value_or(kNan); }

void set_config(ModelResults& m, const nlohmann::json& config) {
  m.config = config;
  m.hidden_size = optional_config_int(config, "hidden_size");
  m.layers = optional_config_int(config, "num_hidden_layers");
  m.heads = optional_config_int(config, "num_attention_heads");
}

// ---- writing ----

json to_json(const Setup& s) {
  json j = {{"preset", s.preset},   {"tokens_per_model", s.tokens_per_model},
          {"steps", s.steps},     {"seed", s.seed},
          {"seq_len", s.seq_len}, {"micro_batch", s.micro_batch},
          {"batch_tokens", s.batch_tokens}, {"lr", s.lr},
          {"warmup_steps", s.warmup_steps}, {"data", s.data},
          {"tokenizer", s.tokenizer},       {"mixture", json(s.mixture)},
          {"machine", s.machine},           {"seeds", s.seeds}};
  if (!s.init_from.empty()) j["init_from"] = s.init_from;
  return j;
}

namespace {

// The Wilson interval of an accuracy as [low, high], or null without trials.
json wilson_json(int64_t successes, int64_t trials) {
  const std::optional<Interval> ci = wilson_95(successes, trials);
  return ci ? json{ci->low, ci->high} : json(nullptr);
}

}  // namespace

json to_json(const TrainResults& t) {
  return {{"tokens", t.tokens},
          {"seconds", t.seconds},
          {"tokens_per_second", t.tokens_per_second},
          {"final_train_loss", t.final_train_loss},
          {"final_val_loss", t.final_val_loss},
          {"curve", loss_curve_json(t.curve, "loss")},
          {"val_curve", loss_curve_json(t.val_curve, "val_loss")}};
}

json to_json(const NiahResults& n) {
  json cells = json::array();
  for (const NiahCell& c : n.cells)
    cells.push_back({{"context", c.context}, {"needles", c.needles}, {"queried", c.queried}, {"depth", c.depth},
                     {"accuracy", c.accuracy}, {"samples", c.samples}, {"asked", c.asked},
                     {"retrieved", c.retrieved}, {"ci95", wilson_json(c.retrieved, c.asked)}});
  int64_t asked = 0, retrieved = 0;
  for (const NiahCell& c : n.cells) asked += c.asked, retrieved += c.retrieved;
  return {{"samples_per_cell", n.samples_per_cell},
          {"cells", cells},
          {"mean_accuracy", n.mean_accuracy},
          {"mean_accuracy_ci95", wilson_json(retrieved, asked)},
          {"accuracy_definition", n.accuracy_definition},
          {"value_digits", n.value_digits},
          {"seed", n.seed},
          {"data", n.data},
          {"split", n.split},
          {"templates", {{"needle", n.needle_template}, {"query_block", n.query_template}}},
          {"seconds", n.seconds}};
}

json to_json(const MqarResults& m) {
  const int64_t correct = std::isfinite(m.accuracy) ? std::llround(m.accuracy * static_cast<double>(m.answers)) : 0;
  return {{"accuracy", m.accuracy}, {"ci95", wilson_json(correct, m.answers)},
          {"samples", m.samples},   {"pairs", m.pairs},
          {"queries", m.queries},   {"loss", m.loss},               {"answers", m.answers},
          {"sequence_tokens", m.sequence_tokens}, {"seed", m.seed}, {"seconds", m.seconds}};
}

json to_json(const AttentionAllocation& a) {
  json j = {{"normalisation", a.normalisation},
            {"prompts", a.prompts},
            {"rows", a.rows},
            {"skipped_rows", a.skipped_rows},
            {"mean", allocation_fields(a.mean)}};
  j["by_depth"] = json::array();
  for (const AllocationPoint& p : a.by_depth) {
    json row = allocation_fields(p.allocation);
    row["depth"] = p.key;
    j["by_depth"].push_back(row);
  }
  j["by_layer"] = json::array();
  for (const AllocationPoint& p : a.by_layer) {
    json row = allocation_fields(p.allocation);
    row["layer"] = static_cast<int64_t>(p.key);
    j["by_layer"].push_back(row);
  }
  j["by_head"] = json::array();
  for (const HeadAllocation& h : a.by_head) {
    json cell = allocation_fields(h.allocation);
    cell["layer"] = h.layer;
    cell["head"] = h.head;
    j["by_head"].push_back(cell);
  }
  return j;
}

json to_json(const Outliers& o) {
  json j = {{"tokens", o.tokens},
            {"sequences", o.sequences},
            {"attention_logits", outlier_stats_json(o.attention_logits)},
            {"hidden_states", outlier_stats_json(o.hidden_states)},
            {"median", o.median_method}};
  j["by_layer"] = json::array();
  for (const LayerOutliers& l : o.by_layer)
    j["by_layer"].push_back({{"layer", l.layer},
                             {"attention_logits_top1", l.attention_logits_top1},
                             {"hidden_states_top1", l.hidden_states_top1}});
  return j;
}

json to_json(const std::vector<QuantizationPoint>& points) {
  json j = json::array();
  for (const QuantizationPoint& p : points) {
    json point = {{"bits", p.bits}, {"val_loss", p.val_loss}, {"tokens", p.val_tokens}};
    if (p.niah_accuracy) point["niah_accuracy"] = *p.niah_accuracy;
    j.push_back(point);
  }
  return j;
}

json to_json(const AttentionMap& m) {
  return {{"layer", m.layer},
          {"head", m.head},
          {"query_position", m.query_position},
          {"tokens", m.tokens},
          {"weights", m.weights},
          {"answer_span", span_json(m.answer_begin, m.answer_end)},
          {"context_span", span_json(m.context_begin, m.context_end)},
          {"depth", m.depth}};
}

json to_json(const Analyses& a) {
  json j = json::object();
  if (a.niah) j["niah"] = to_json(*a.niah);
  if (a.mqar) j["mqar"] = to_json(*a.mqar);
  if (a.attention_allocation) j["attention_allocation"] = to_json(*a.attention_allocation);
  if (a.attention_map) j["attention_map"] = to_json(*a.attention_map);
  if (a.outliers) j["outliers"] = to_json(*a.outliers);
  if (!a.quantization.empty()) j["quantization"] = to_json(a.quantization);
  return j;
}

json to_json(const ModelResults& m) {
  json j = {{"name", m.name},             {"attention", m.attention}, {"seed", m.seed},
            {"parameters", m.parameters}, {"train", to_json(m.train)}};
  if (!m.config.is_null()) j["config"] = m.config;
  if (!m.run_dir.empty()) j["run_dir"] = m.run_dir;
  j.update(to_json(static_cast<const Analyses&>(m)));
  return j;
}

json to_json(const ExperimentResults& r) {
  json models = json::array();
  for (const ModelResults& m : r.models) models.push_back(to_json(m));
  json j = {{"schema", r.schema}, {"created", r.created}, {"setup", to_json(r.setup)}, {"models", models}};
  if (r.setup.seeds.size() >= 2) j["statistics"] = seed_statistics(r);
  return j;
}

// ---- reading ----

Setup parse_setup(const JsonField& j) {
  Setup s;
  s.preset = j.at("preset").string();
  s.tokens_per_model = j.at("tokens_per_model").integer();
  s.steps = optional_integer(j, "steps");
  s.seed = j.at("seed").integer();
  s.seq_len = j.at("seq_len").integer();
  s.micro_batch = j.at("micro_batch").integer();
  s.batch_tokens = optional_integer(j, "batch_tokens");
  s.lr = j.at("lr").number();
  s.warmup_steps = optional_integer(j, "warmup_steps");
  s.data = j.at("data").string();
  s.tokenizer = j.at("tokenizer").string();
  s.machine = j.at("machine").string();
  const JsonField mixture = j.at("mixture");
  mixture.expect_object();
  for (const auto& [task, fraction] : mixture.value().items()) s.mixture[task] = mixture.at(task).number();
  if (const auto seeds = j.find("seeds"))
    for (size_t i = 0; i < seeds->size(); ++i) s.seeds.push_back((*seeds)[i].integer());
  if (const auto init_from = j.find("init_from")) s.init_from = init_from->string();
  return s;
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
                       c.at("depth").number(), c.at("accuracy").number(), c.at("samples").integer(),
                       optional_integer(c, "asked"), optional_integer(c, "retrieved")});
  }
  n.mean_accuracy = optional_number(j, "mean_accuracy");
  n.accuracy_definition = optional_string(j, "accuracy_definition");
  if (const auto templates = j.find("templates")) {
    n.needle_template = optional_string(*templates, "needle");
    n.query_template = optional_string(*templates, "query_block");
  }
  n.value_digits = optional_integer(j, "value_digits");
  n.seed = static_cast<uint64_t>(optional_integer(j, "seed"));
  n.data = optional_string(j, "data");
  n.split = optional_string(j, "split");
  n.seconds = optional_number(j, "seconds");
  return n;
}

MqarResults parse_mqar(const JsonField& j) {
  return {j.at("accuracy").number(),       j.at("samples").integer(),
          j.at("pairs").integer(),         j.at("queries").integer(),
          optional_number(j, "loss"),      optional_integer(j, "answers"),
          optional_integer(j, "sequence_tokens"), static_cast<uint64_t>(optional_integer(j, "seed")),
          optional_number(j, "seconds")};
}

AttentionAllocation parse_allocation(const JsonField& j) {
  AttentionAllocation a;
  a.normalisation = j.at("normalisation").string();
  a.by_depth = parse_allocation_points(j.find("by_depth"), "depth");
  a.by_layer = parse_allocation_points(j.find("by_layer"), "layer");
  a.prompts = optional_integer(j, "prompts");
  a.rows = optional_integer(j, "rows");
  a.skipped_rows = optional_integer(j, "skipped_rows");
  if (const auto mean = j.find("mean")) a.mean = parse_allocation_fields(*mean);
  if (const auto heads = j.find("by_head"))
    for (size_t i = 0; i < heads->size(); ++i) {
      const JsonField h = (*heads)[i];
      a.by_head.push_back({h.at("layer").integer(), h.at("head").integer(), parse_allocation_fields(h)});
    }
  return a;
}

Outliers parse_outliers(const JsonField& j) {
  Outliers o;
  o.tokens = j.at("tokens").integer();
  o.attention_logits = parse_outlier_stats(j.at("attention_logits"));
  o.hidden_states = parse_outlier_stats(j.at("hidden_states"));
  o.sequences = optional_integer(j, "sequences");
  o.median_method = optional_string(j, "median");
  if (const auto layers = j.find("by_layer"))
    for (size_t i = 0; i < layers->size(); ++i) {
      const JsonField l = (*layers)[i];
      o.by_layer.push_back(
          {l.at("layer").integer(), l.at("attention_logits_top1").number(), l.at("hidden_states_top1").number()});
    }
  return o;
}

std::vector<QuantizationPoint> parse_quantization(const JsonField& j) {
  std::vector<QuantizationPoint> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const JsonField p = j[i];
    QuantizationPoint q{p.at("bits").integer(), p.at("val_loss").number(), optional_integer(p, "tokens")};
    if (p.value().contains("niah_accuracy")) q.niah_accuracy = p.at("niah_accuracy").number();
    out.push_back(q);
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
  if (const auto context = j.find("context_span")) {
    DIFFTX_CHECK(context->size() == 2, context->where(), ": expected [begin, end), got ", context->size(), " numbers");
    m.context_begin = (*context)[0].integer();
    m.context_end = (*context)[1].integer();
  }
  m.depth = optional_number(j, "depth");
  return m;
}

ModelResults parse_model(const JsonField& j) {
  ModelResults m;
  m.name = j.at("name").string();
  m.attention = j.at("attention").string();
  m.parameters = j.at("parameters").integer();
  m.seed = optional_integer(j, "seed");
  if (const auto dir = j.find("run_dir")) m.run_dir = dir->string();
  if (const auto config = j.find("config")) {
    config->expect_object();
    for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads"})
      if (const auto v = config->find(key)) v->integer();  // an error naming the key path when it is not one
    set_config(m, config->value());
  }
  m.train = parse_train(j.at("train"));
  if (const auto v = j.find("niah")) m.niah = parse_niah(*v);
  if (const auto v = j.find("mqar")) m.mqar = parse_mqar(*v);
  if (const auto v = j.find("attention_allocation")) m.attention_allocation = parse_allocation(*v);
  if (const auto v = j.find("outliers")) m.outliers = parse_outliers(*v);
  if (const auto v = j.find("quantization")) m.quantization = parse_quantization(*v);
  if (const auto v = j.find("attention_map")) m.attention_map = parse_attention_map(*v);
  return m;
}

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
  std::set<std::pair<std::string, int64_t>> runs;  // a name once per seed
  for (size_t i = 0; i < models.size(); ++i) {
    r.models.push_back(parse_model(models[i]));
    DIFFTX_CHECK(runs.insert({r.models.back().name, r.models.back().seed}).second, models[i].at("name").where(),
                 ": model name \"", r.models.back().name, "\" is used twice with seed ", r.models.back().seed);
  }
  return r;
}

ExperimentResults read_experiment_results(const std::filesystem::path& path) {
  return parse_experiment_results(io::read_json_file(path), path.string());
}

}  // namespace difftx::results
