#include "report/report_page.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "report/palette.h"
#include "report/svg_text.h"
#include "results/statistics.h"

namespace difftx::report {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

const char* kStyle = R"(
body { margin: 0; background: #f4f5f7; color: #222; line-height: 1.5;
       font-family: 'DejaVu Sans', -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; }
main { max-width: 1060px; margin: 0 auto; padding: 28px 32px 48px; background: #fff; }
h1 { font-size: 25px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #e3e3e3; }
p.meta, footer { color: #666; font-size: 13px; }
p, li { font-size: 15px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 8px; border-bottom: 1px solid #ececec; text-align: right; white-space: nowrap; }
th { background: #f3f4f6; font-weight: 600; white-space: normal; vertical-align: bottom; }
th:first-child, td:first-child { text-align: left; }
table.setup td { text-align: left; white-space: normal; }
table.setup td:first-child { color: #555; }
td.best { font-weight: bold; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 7px;
          vertical-align: -1px; }
ul.checks { padding-left: 20px; }
.ok { color: #007a56; } .warn { color: #b34700; }
figure { margin: 28px 0 36px; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #e6e6e6; border-radius: 4px; }
figcaption { margin-top: 8px; font-size: 14px; color: #444; max-width: 920px; }
)";

std::string esc(const std::string& s) { return xml_escape(s); }

std::string cell(const std::string& text, bool best = false) {
  return std::string(best ? "<td class=\"best\">" : "<td>") + esc(text) + "</td>";
}

std::string swatch(const ExperimentResults& r, size_t model_index) {
  return "<span class=\"swatch\" style=\"background:" + model_colour(r, model_index) + "\"></span>";
}

bool several_seeds(const ExperimentResults& r) { return r.setup.seeds.size() > 1; }

std::string seed_list(const ExperimentResults& r) {
  std::string out;
  for (size_t i = 0; i < r.setup.seeds.size(); ++i) out += (i ? ", " : "") + std::to_string(r.setup.seeds[i]);
  return out;
}

std::string mixture_text(const results::Setup& s) {
  if (s.mixture.empty()) return "language modelling only";
  std::string out;
  double tasks = 0;
  for (const auto& [task, fraction] : s.mixture) {
    out += ", " + task + " " + format_fixed(100 * fraction, 0) + "%";
    if (std::isfinite(fraction)) tasks += fraction;
  }
  return "language modelling " + format_fixed(100 * (1 - tasks), 0) + "%" + out + " of training rows";
}

std::string setup_section(const ExperimentResults& r) {
  const results::Setup& s = r.setup;
  std::vector<std::pair<const char*, std::string>> rows = {
      {"Preset", s.preset},
      {"Tokens per model", format_grouped(static_cast<double>(s.tokens_per_model))},
      {"Sequence length, micro-batch",
       std::to_string(s.seq_len) + " tokens, " + std::to_string(s.micro_batch) + " sequences"},
      {"Peak learning rate", format_significant(s.lr, 3)},
      {several_seeds(r) ? "Seeds" : "Seed", several_seeds(r) ? seed_list(r) : std::to_string(s.seed)},
      {"Data, tokenizer", s.data + ", " + s.tokenizer},
      {"Training mixture", mixture_text(s)},
      {"Machine", s.machine},
      {"Created", r.created},
  };
  if (!s.init_from.empty())
    rows.emplace_back("Started from", "the same variant and seed's last checkpoint in " + s.init_from);
  std::string html = "<section id=\"setup\"><h2>Setup</h2><div class=\"table-wrap\"><table class=\"setup\">";
  for (const auto& [key, value] : rows) html += "<tr><td>" + std::string(key) + "</td>" + cell(value) + "</tr>";
  html += "</table></div>";

  // What makes the comparison fair, checked on the results themselves.
  double tokens_lo = kNan, tokens_hi = kNan, params_lo = kNan, params_hi = kNan;
  for (const auto& m : r.models) {
    const double p = static_cast<double>(m.parameters);
    tokens_lo = std::fmin(tokens_lo, m.train.tokens), tokens_hi = std::fmax(tokens_hi, m.train.tokens);
    params_lo = std::fmin(params_lo, p), params_hi = std::fmax(params_hi, p);
  }
  const bool same_tokens = tokens_lo == tokens_hi;
  const double spread = params_lo > 0 ? params_hi / params_lo - 1 : kNan;
  const bool close_params = spread <= 0.02;
  html += "<ul class=\"checks\">";
  html += std::string("<li class=\"") + (same_tokens ? "ok\">&#10003; " : "warn\">&#9888; ") + "Training tokens: " +
          (same_tokens ? esc(format_grouped(tokens_lo)) + " for every model"
                       : "differ, from " + esc(format_grouped(tokens_lo)) + " to " + esc(format_grouped(tokens_hi))) +
          ".</li>";
  html += std::string("<li class=\"") + (close_params ? "ok\">&#10003; " : "warn\">&#9888; ") +
          "Parameters: " + esc(format_grouped(params_lo)) + " to " + esc(format_grouped(params_hi)) + " (largest " +
          esc(format_fixed(100 * spread, 1)) + "% above the smallest" + (close_params ? "" : "; more than 2%") +
          ").</li>";
  if (several_seeds(r))
    html += "<li>Every variant trained once per seed (" + seed_list(r) +
            "); the seed sets the initialisation and the data order, so the runs of one seed saw the same data in "
            "the same order.</li></ul></section>\n";
  else
    html += "<li>Every model saw the same training data in the same order, from the same seed (" +
            std::to_string(s.seed) + ").</li></ul></section>\n";
  return html;
}

// Index of the model with the best finite value (lowest or highest); npos when none.
template <typename Get>
size_t best_model(const std::vector<ModelResults>& models, Get get, bool lower_is_better) {
  size_t best = std::string::npos;
  for (size_t i = 0; i < models.size(); ++i) {
    const double v = get(models[i]);
    if (!std::isfinite(v)) continue;
    if (best == std::string::npos || (lower_is_better ? v < get(models[best]) : v > get(models[best]))) best = i;
  }
  return best;
}

std::string results_section(const ExperimentResults& r) {
  const auto val_loss = [](const ModelResults& m) { return m.train.final_val_loss; };
  const auto niah = [](const ModelResults& m) { return m.niah ? results::mean_cell_accuracy(*m.niah) : kNan; };
  const auto mqar = [](const ModelResults& m) { return m.mqar ? m.mqar->accuracy : kNan; };
  const size_t best_loss = best_model(r.models, val_loss, true), best_niah = best_model(r.models, niah, false),
               best_mqar = best_model(r.models, mqar, false);
  // The attention column only when some name does not already say it (ablations).
  const bool show_attention =
      std::any_of(r.models.begin(), r.models.end(), [](const ModelResults& m) { return m.name != m.attention; });
  std::string html =
      "<section id=\"results\"><h2>Results</h2><div class=\"table-wrap\"><table class=\"results\"><tr>"
      "<th>model</th>";
  if (show_attention) html += "<th>attention</th>";
  html +=
      "<th>parameters</th><th>shape</th><th>tokens</th><th>time</th><th>tokens/s</th><th>train loss</th>"
      "<th>val loss</th><th>NIAH</th><th>MQAR</th><th>top |logit|</th><th>top |hidden|</th></tr>";
  for (size_t i = 0; i < r.models.size(); ++i) {
    const ModelResults& m = r.models[i];
    const std::string shape = m.layers > 0 ? std::to_string(m.layers) + "L \u00d7 " + std::to_string(m.hidden_size) +
                                                 "d, " + std::to_string(m.heads) + "h"
                                           : "n/a";
    html += "<tr><td>" + swatch(r, i) + esc(model_label(r, i)) + "</td>" + (show_attention ? cell(m.attention) : "") +
            cell(format_grouped(static_cast<double>(m.parameters))) + cell(shape) + cell(format_count(m.train.tokens)) +
            cell(format_fixed(m.train.seconds, 0) + " s") + cell(format_grouped(m.train.tokens_per_second)) +
            cell(format_fixed(m.train.final_train_loss, 3)) + cell(format_fixed(val_loss(m), 3), i == best_loss) +
            cell(format_fixed(niah(m), 3), i == best_niah) + cell(format_fixed(mqar(m), 3), i == best_mqar) +
            cell(m.outliers ? format_significant(m.outliers->attention_logits.top1, 3) : "n/a") +
            cell(m.outliers ? format_significant(m.outliers->hidden_states.top1, 3) : "n/a") + "</tr>";
  }
  html +=
      "</table></div><p>Shape: layers \u00d7 model width, attention heads. Losses are in nats per token; bold "
      "marks the best value of a column. NIAH: mean accuracy over the cells of the retrieval heatmap below; MQAR: "
      "accuracy on multi-query associative recall; top |logit|, top |hidden|: the largest absolute attention logit "
      "and hidden state (activation outliers). n/a: not measured.</p></section>\n";
  return html;
}

std::string interval_text(const std::optional<results::Interval>& i) {
  if (!i) return "n/a (one seed)";
  return std::string("[").append(format_significant(i->low, 3)).append(", ").append(format_significant(i->high, 3)).append("]");
}

// With several seeds: per metric, each variant's value per seed, its mean and 95% interval, the
// paired difference to the baseline (same seed) with its interval, and in words which
// differences are outside the seed noise (their interval excludes 0).
std::string seeds_section(const ExperimentResults& r) {
  if (!several_seeds(r)) return "";
  std::string table =
      "<div class=\"table-wrap\"><table class=\"seeds\"><tr><th>metric</th><th>model</th><th>per seed</th>"
      "<th>mean</th><th>95% interval</th><th>minus baseline (same seed)</th><th>95% interval</th><th>seed noise</th></tr>";
  std::string outside, within;
  for (const results::Metric& metric : results::seed_metrics()) {
    const auto rows = results::seed_comparison(r, metric);
    if (std::all_of(rows.begin(), rows.end(), [](const auto& row) { return row.summary.n == 0; })) continue;
    for (const auto& row : rows) {
      std::string points;
      for (size_t k = 0; k < row.seeds.size(); ++k)
        points += (k ? ", " : "") + std::to_string(row.seeds[k]) + ": " + format_significant(row.values[k], 4);
      const bool paired = row.paired && row.paired->n > 0;
      const std::string verdict = !paired ? "" : !row.paired->ci95 ? "one pair: no interval"
                                  : row.outside_seed_noise()        ? "outside"
                                                                    : "within";
      table += "<tr>" + cell(metric.label) + cell(row.variant) + cell(points) +
               cell(row.summary.n ? format_significant(row.summary.mean, 4) : "n/a") +
               cell(interval_text(row.summary.ci95)) + cell(paired ? format_significant(row.paired->mean, 3) : "") +
               cell(paired ? interval_text(row.paired->ci95) : "") + cell(verdict) + "</tr>";
      if (!paired || !row.paired->ci95) continue;
      const std::string numbers = format_significant(std::fabs(row.paired->mean), 3) + " (95% interval of " +
                                  row.variant + " minus baseline: " + interval_text(row.paired->ci95) + ", " +
                                  std::to_string(row.paired->n) + " seeds)";
      if (row.outside_seed_noise())
        outside += "<li>" + esc(row.variant) + "'s " + esc(metric.label) + " is " +
                   (row.paired->mean < 0 ? "lower" : "higher") + " than the baseline's by " + esc(numbers) + ".</li>";
      else
        within += "<li>" + esc(row.variant) + " against the baseline on " + esc(metric.label) + ": " +
                  (row.paired->mean < 0 ? "lower by " : "higher by ") + esc(numbers) + "; the interval holds 0.</li>";
    }
  }
  std::string html =
      "<section id=\"seeds\"><h2>Across seeds</h2><p>Each variant trained once per seed (" + seed_list(r) +
      "). A difference to the baseline is taken seed by seed (both runs saw the same data in the same order) and "
      "counts as outside the seed noise when the 95% interval of those paired differences (Student t) excludes "
      "0.</p>";
  html += "<p><b>Outside the seed noise:</b></p><ul>" + (outside.empty() ? "<li>nothing</li>" : outside) + "</ul>";
  html += "<p><b>Within the seed noise:</b></p><ul>" + (within.empty() ? "<li>nothing</li>" : within) + "</ul>";
  return html + table + "</table></div></section>\n";
}

std::string charts_section(const ReportCharts& charts) {
  std::string html;
  for (const auto& c : charts.charts) html += chart_figure(c);
  if (!charts.omitted.empty()) {
    html += "<p class=\"meta\">Not drawn: ";
    for (size_t i = 0; i < charts.omitted.size(); ++i) html += (i ? "; " : "") + esc(charts.omitted[i]);
    html += ".</p>\n";
  }
  return html;
}

}  // namespace

std::string page_head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>" +
         esc(title) + "</title><style>" + kStyle + "</style></head>\n<body><main>\n";
}

std::string chart_figure(const ReportChart& c) {
  const std::string id = c.file.substr(0, c.file.find('.'));
  return "<figure id=\"" + esc(id) + "\"><h2>" + esc(c.title) + "</h2><a href=\"" + esc(c.file) + "\"><img src=\"" +
         esc(c.file) + "\" width=\"" + svg_number(c.width) + "\" height=\"" + svg_number(c.height) + "\" alt=\"" +
         esc(c.title) + "\"></a><figcaption>" + esc(c.caption) + "</figcaption></figure>\n";
}

std::string report_page_html(const ExperimentResults& r, const ReportCharts& charts, const std::string& results_link) {
  std::string names;
  for (size_t i = 0; i < r.models.size(); ++i) names += (i ? " vs " : "") + r.models[i].name;
  std::string html = page_head("difftx report: " + names);
  html += "<header><h1>Differential Transformer experiment: " + esc(names) + "</h1><p class=\"meta\">Created " +
          esc(r.created) + " by <code>difftx experiment compare</code> | raw numbers: <a href=\"" + esc(results_link) +
          "\">results.json</a></p>";
  html +=
      "<p>Each model was trained from scratch on the same data with the same seed (per seed, when there are "
      "several) and token budget, then "
      "measured with the analyses below (retrieval, attention noise, activation outliers, quantization), as in "
      "the DIFF Transformer paper but at CPU scale. Small models and few samples make small differences "
      "uncertain: read them with the sample counts in mind.</p></header>\n";
  html += setup_section(r) + results_section(r) + seeds_section(r) + charts_section(charts);
  html += "<footer>Rendered by <code>difftx experiment report</code> from " + esc(results_link) + " (schema " +
          esc(r.schema) +
          "). Each chart is a standalone SVG file: open it to see values on hover.</footer>\n"
          "</main></body></html>\n";
  return html;
}

}  // namespace difftx::report
