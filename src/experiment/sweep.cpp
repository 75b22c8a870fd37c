#include "experiment/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>

#include "core/error.h"
#include "data/dataset.h"
#include "io/json_file.h"
#include "model/config.h"
#include "results/power_law.h"
#include "results/statistics.h"

namespace difftx::experiment {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;


std::string width_preset(int64_t width) { return std::string("w").append(std::to_string(width)); }
std::string point_name(int64_t width, int64_t tokens) { return width_preset(width) + "_t" + std::to_string(tokens); }

// Parameters outside the token embedding and a separate output head: what grows with the
// model's shape, and the x of the size axis (embeddings dominate models this small).
int64_t non_embedding_parameters(const results::ModelResults& m) {
  const int64_t vocab = m.config.value("vocab_size", int64_t{0}), hidden = m.config.value("hidden_size", int64_t{0});
  const bool tied = m.config.value("tie_word_embeddings", false);
  return m.parameters - vocab * hidden * (tied ? 1 : 2);
}

// Writes the scaled configs of `width` under OUT/configs, or checks that an earlier pass wrote
// the same ones.
void write_width_configs(const SweepOptions& o, int64_t width) {
  const fs::path dir = o.compare.out_dir / "configs" / width_preset(width);
  fs::create_directories(dir);
  for (const std::string& v : o.compare.variants) {
    const fs::path from = o.compare.configs_dir / o.compare.preset / (v + ".json");
    DIFFTX_CHECK(fs::is_regular_file(from), "sweep: no config ", from.string());
    const json scaled = scaled_config(io::read_json_file(from), width, from.string());
    model::config_from_json(scaled, from.string() + " scaled to width " + std::to_string(width));  // a valid model
    const fs::path to = dir / (v + ".json");
    if (fs::exists(to))
      DIFFTX_CHECK(io::read_json_file(to) == scaled, "sweep: ", to.string(),
                   " differs from the config these options give: the sweep directory was made with other options");
    else
      io::write_json_file(to, scaled);
  }
}

// The axes a point lies on (the size axis, the token axis or both) and each axis's x.
json point_axes(const SweepOptions& o, int64_t width, int64_t tokens) {
  json axes = json::array();
  if (tokens == o.size_tokens && std::find(o.widths.begin(), o.widths.end(), width) != o.widths.end())
    axes.push_back("parameters");
  if (width == o.budget_width && std::find(o.budgets.begin(), o.budgets.end(), tokens) != o.budgets.end())
    axes.push_back("tokens");
  return axes;
}
constexpr std::pair<const char*, const char*> kAxes[] = {{"parameters", "non_embedding_parameters"},
                                                         {"tokens", "trained_tokens"}};

}  // namespace

json scaled_config(const json& preset_config, int64_t width, const std::string& where) {
  const int64_t hidden = preset_config.at("hidden_size"), heads = preset_config.at("num_attention_heads");
  const int64_t kv_heads = preset_config.value("num_key_value_heads", heads), ffn = preset_config.at("intermediate_size");
  DIFFTX_CHECK(width >= 1 && width <= (int64_t{1} << 16), "sweep: width ", width, " is outside [1, 65536]");
  DIFFTX_CHECK(heads * width % hidden == 0 && kv_heads * width % hidden == 0, "sweep: width ", width,
               " does not scale the ", heads, " heads and ", kv_heads, " kv heads of ", where, " (hidden size ", hidden,
               ") to whole numbers; use a multiple of ", hidden / std::gcd(hidden, std::gcd(heads, kv_heads)));
  json c = preset_config;
  c["hidden_size"] = width;
  c["num_attention_heads"] = heads * width / hidden;
  c["num_key_value_heads"] = kv_heads * width / hidden;
  // The FFN in proportion, rounded to a multiple of 8 (V2's smaller FFN keeps it near equal
  // parameters; compare logs the spread).
  c["intermediate_size"] = std::max<int64_t>(8, (ffn * width + 4 * hidden) / (8 * hidden) * 8);
  return c;
}

namespace {

// Ratios average on the log scale (2 and 1/2 average to 1, and an interval cannot go below 0):
// "mean" is the geometric mean and "ci95" the t interval of the mean log, both exponentiated.
json ratio_summary(const std::vector<double>& ratios) {
  std::vector<double> logs;
  for (double r : ratios) logs.push_back(r > 0 ? std::log(r) : std::nan(""));
  const results::Summary s = results::summarize(logs);
  json out = {{"n", s.n}, {"scale", "geometric"}, {"log_sd", s.sd}, {"mean", nullptr}, {"ci95", nullptr}};
  if (s.n > 0) out["mean"] = std::exp(s.mean);
  if (s.ci95) out["ci95"] = {std::exp(s.ci95->low), std::exp(s.ci95->high)};
  return out;
}

}  // namespace

json sweep_fits(const json& sweep) {
  const std::vector<std::string> variants = sweep.at("setup").at("variants");
  json fits = json::object();
  for (const auto& [axis, x_key] : kAxes) {
    // variant -> seed -> points (x, loss)
    std::map<std::string, std::map<int64_t, std::pair<std::vector<double>, std::vector<double>>>> runs;
    double x0 = 0;  // the largest baseline x on the axis
    double x_low = INFINITY, x_high = 0;  // the sizes measured on the axis, any variant
    for (const json& p : sweep.at("points")) {
      const json& on = p.at("axes");
      if (std::find(on.begin(), on.end(), axis) == on.end() || p["val_loss"].is_null()) continue;
      const double x = p[x_key].get<double>();
      auto& [xs, losses] = runs[p["variant"].get<std::string>()][p["seed"].get<int64_t>()];
      xs.push_back(x);
      losses.push_back(p["val_loss"].get<double>());
      if (p["variant"] == "baseline") x0 = std::max(x0, x);
      x_low = std::min(x_low, x), x_high = std::max(x_high, x);
    }
    json out = {{"x", x_key}, {"at", x0}, {"variants", json::object()}, {"matching", json::object()}};
    if (x_high > 0) out["measured"] = {x_low, x_high};
    std::map<std::string, std::map<int64_t, results::PowerLaw>> laws;
    for (const std::string& v : variants) {
      json per_seed = json::array();
      std::vector<double> exponents;
      for (const auto& [seed, points] : runs[v]) {
        if (std::set<double>(points.first.begin(), points.first.end()).size() < 2) continue;
        const results::PowerLaw law = results::fit_power_law(points.first, points.second);
        laws[v][seed] = law;
        per_seed.push_back({{"seed", seed}, {"a", law.a}, {"b", law.b}});
        exponents.push_back(law.b);
      }
      out["variants"][v] = {{"per_seed", per_seed}, {"exponent", results::to_json(results::summarize(exponents))}};
    }
    for (const std::string& v : variants) {
      if (v == "baseline") continue;
      json per_seed = json::array();
      std::vector<double> ratios;
      int64_t extrapolated = 0;  // seeds whose matching size lies outside the measured sizes
      if (x0 > 0)
        for (const auto& [seed, law] : laws[v])
          if (const auto base = laws["baseline"].find(seed); base != laws["baseline"].end()) {
            const double ratio = results::matching_ratio(law, base->second, x0);
            const bool outside = !(ratio * x0 >= x_low && ratio * x0 <= x_high);
            per_seed.push_back({{"seed", seed}, {"ratio", ratio}, {"extrapolated", outside}});
            ratios.push_back(ratio);
            extrapolated += outside;
          }
      out["matching"][v] = {{"per_seed", per_seed}, {"ratio", ratio_summary(ratios)}, {"extrapolated_seeds", extrapolated}};
    }
    fits[axis] = out;
  }
  return fits;
}

json run_sweep(const SweepOptions& o, const std::function<void(const std::string&)>& log) {
  DIFFTX_CHECK(o.widths.size() >= 2, "sweep: --widths needs at least two sizes, got ", o.widths.size());
  DIFFTX_CHECK(o.budgets.size() >= 2, "sweep: --budgets needs at least two token budgets, got ", o.budgets.size());
  DIFFTX_CHECK(o.size_tokens >= 1 && o.budget_width >= 1, "sweep: --tokens and --budget-width must be positive");
  DIFFTX_CHECK(std::set<int64_t>(o.widths.begin(), o.widths.end()).size() == o.widths.size() &&
                   std::set<int64_t>(o.budgets.begin(), o.budgets.end()).size() == o.budgets.size(),
               "sweep: a width or budget is named twice");
  for (int64_t b : o.budgets) DIFFTX_CHECK(b >= 1, "sweep: budget ", b, " must be positive");
  // Every point: the size axis, then the token axis (a point on both runs once).
  std::vector<std::pair<int64_t, int64_t>> points;
  for (int64_t w : o.widths) points.emplace_back(w, o.size_tokens);
  for (int64_t t : o.budgets)
    if (std::find(points.begin(), points.end(), std::pair{o.budget_width, t}) == points.end())
      points.emplace_back(o.budget_width, t);
  std::set<int64_t> widths;
  for (const auto& [w, t] : points) widths.insert(w);
  for (int64_t w : widths) write_width_configs(o, w);  // every config checked before any training
  // A point that reads its data more than twice measures memorisation as much as scaling.
  const data::DatasetInfo data_info = data::read_dataset(o.compare.data_dir);
  const auto train_split = data_info.splits.find("train");
  DIFFTX_CHECK(train_split != data_info.splits.end() && train_split->second.tokens > 0, o.compare.data_dir.string(),
               ": the data has no training tokens");
  const int64_t train_tokens = train_split->second.tokens;
  const int64_t most_tokens = std::max(o.size_tokens, *std::max_element(o.budgets.begin(), o.budgets.end()));
  const double most_passes = static_cast<double>(most_tokens) / static_cast<double>(train_tokens);
  char passes_text[160];
  std::snprintf(passes_text, sizeof passes_text, "data: %lld training tokens; the longest point reads them %.2f times",
                (long long)train_tokens, most_passes);
  log(passes_text);
  if (most_passes > 2)
    log("note: more than two passes over the data; a larger corpus keeps the points comparable "
        "(difftx prepare --books has about twice the default's text)");

  json setup = {{"preset", o.compare.preset}, {"variants", o.compare.variants}, {"seeds", o.compare.seeds},
                {"widths", o.widths}, {"size_tokens", o.size_tokens}, {"budget_width", o.budget_width},
                {"budgets", o.budgets}, {"seq_len", o.compare.train.seq_len},
                {"micro_batch", o.compare.train.micro_batch}, {"lr", o.compare.train.lr},
                {"data", o.compare.data_dir.string()}, {"data_train_tokens", train_tokens}};
  json sweep = {{"schema", "difftx.sweep/1"}, {"setup", setup}, {"points", json::array()}};
  for (size_t i = 0; i < points.size(); ++i) {
    const auto [width, tokens] = points[i];
    log("\n=== sweep point " + std::to_string(i + 1) + " of " + std::to_string(points.size()) + ": width " +
        std::to_string(width) + ", " + std::to_string(tokens) + " tokens");
    CompareOptions c = o.compare;
    c.configs_dir = o.compare.out_dir / "configs";
    c.preset = width_preset(width);
    c.tokens = tokens;
    c.out_dir = o.compare.out_dir / "points" / point_name(width, tokens);
    c.analyse = false;
    const results::ExperimentResults r = run_compare(c, log);
    for (const results::ModelResults& m : r.models)
      sweep["points"].push_back({{"width", width}, {"tokens", tokens}, {"axes", point_axes(o, width, tokens)},
                                 {"variant", m.name}, {"seed", m.seed},
                                 {"parameters", m.parameters}, {"non_embedding_parameters", non_embedding_parameters(m)},
                                 {"trained_tokens", m.train.tokens},
                                 {"passes", static_cast<double>(m.train.tokens) / static_cast<double>(train_tokens)},
                                 {"val_loss", std::isfinite(m.train.final_val_loss) ? json(m.train.final_val_loss) : json(nullptr)},
                                 {"run_dir", fs::path(m.run_dir).lexically_relative(o.compare.out_dir).string()}});
  }
  sweep["fits"] = sweep_fits(sweep);
  io::write_json_file(o.compare.out_dir / "sweep.json", sweep);
  return sweep;
}

}  // namespace difftx::experiment
