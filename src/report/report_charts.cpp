#include "report/report_charts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "report/attention_chart.h"
#include "report/bar_chart.h"
#include "report/figure_layout.h"
#include "report/heatmap_chart.h"
#include "report/line_chart.h"
#include "report/palette.h"
#include "report/seed_chart.h"
#include "report/svg_text.h"
#include "results/statistics.h"

namespace difftx::report {
namespace {

constexpr double kWidth = 980;        // of every figure but the NIAH heatmaps
constexpr double kPanelHeight = 330;  // of line and bar panels
constexpr double kPanelGap = 28;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

ReportChart finished(const SvgCanvas& svg, std::string file, std::string title, std::string caption) {
  return {std::move(file), std::move(title), std::move(caption), svg.finish(), svg.width(), svg.height()};
}

std::string percent(double fraction) { return format_fixed(100 * fraction, 0) + "%"; }

// One legend entry per model (colour by the model's index, so it is the same in every chart).
std::vector<LegendEntry> model_legend(const ExperimentResults& r, LegendMark mark, bool (*has)(const ModelResults&)) {
  std::vector<LegendEntry> out;
  for (size_t i = 0; i < r.models.size(); ++i)
    if (has(r.models[i]) && std::none_of(out.begin(), out.end(), [&](const LegendEntry& e) { return e.label == r.models[i].name; }))
      out.push_back({r.models[i].name, model_colour(r, i), mark});
  return out;
}

std::string setup_line(const ExperimentResults& r) {
  std::string seeds;
  for (const int64_t s : r.setup.seeds) seeds += (seeds.empty() ? "" : ",") + std::to_string(s);
  return "preset " + r.setup.preset + " | " + format_count(static_cast<double>(r.setup.tokens_per_model)) +
         " tokens per model | sequence length " + std::to_string(r.setup.seq_len) +
         (r.setup.seeds.size() > 1 ? " | seeds " + seeds + " | same data and order per seed"
                                   : " | seed " + std::to_string(r.setup.seed) + " | same data and order for every model");
}

// Each y replaced by the mean of the finite y within `half_window` points on either side (NaN
// where there are none): a smoothing that does not lag behind the data.
Points moving_average(const Points& points, size_t half_window) {
  Points out;
  for (size_t i = 0; i < points.size(); ++i) {
    const size_t lo = i > half_window ? i - half_window : 0, hi = std::min(points.size(), i + half_window + 1);
    double sum = 0;
    int n = 0;
    for (size_t k = lo; k < hi; ++k)
      if (std::isfinite(points[k].second)) sum += points[k].second, ++n;
    out.emplace_back(points[i].first, n > 0 ? sum / n : kNan);
  }
  return out;
}

// A figure of line panels, two to a row, below a heading and the models' legend.
ReportChart line_figure(const std::string& heading, const std::string& subheading,
                        const std::vector<LegendEntry>& legend, const std::vector<LinePanel>& panels, std::string file,
                        std::string title, std::string caption) {
  constexpr size_t kPerRow = 2;
  SvgCanvas svg(kWidth, 100);
  double y = draw_figure_header(svg, heading, subheading, legend);
  for (size_t first = 0; first < panels.size(); first += kPerRow) {
    const auto areas = split_row({kFigureMargin, y, kWidth - 2 * kFigureMargin, kPanelHeight}, kPerRow, kPanelGap);
    for (size_t k = 0; k < kPerRow && first + k < panels.size(); ++k) draw_line_panel(svg, areas[k], panels[first + k]);
    y += kPanelHeight + 8;
  }
  svg.set_height(y + kFigureMargin);
  return finished(svg, std::move(file), std::move(title), std::move(caption));
}

}  // namespace

std::string model_colour(const ExperimentResults& r, size_t i) {
  std::vector<std::string> variants;  // in the order they first appear, up to model i's
  for (size_t k = 0; k <= i; ++k)
    if (std::find(variants.begin(), variants.end(), r.models[k].name) == variants.end())
      variants.push_back(r.models[k].name);
  return category_colour(std::find(variants.begin(), variants.end(), r.models[i].name) - variants.begin());
}

std::string model_label(const ExperimentResults& r, size_t i) {
  const ModelResults& m = r.models[i];
  return r.setup.seeds.size() > 1 ? m.name + ", seed " + std::to_string(m.seed) : m.name;
}

ReportChart loss_curves_chart(const ExperimentResults& r) {
  double last_tokens = 0;
  size_t longest_curve = 0;
  for (const auto& m : r.models) {
    for (const auto* curve : {&m.train.curve, &m.train.val_curve})
      for (const auto& p : *curve)
        last_tokens = std::max(last_tokens, static_cast<double>(p.tokens));
    longest_curve = std::max(longest_curve, m.train.curve.size());
  }
  const size_t half_window = longest_curve / 60;  // about 1/30 of the run
  const auto x_range = std::pair{0.0, last_tokens > 0 ? last_tokens : 1.0};
  LinePanel train{.title = "Training loss",
                  .axes = {"tokens seen", "cross-entropy (nats / token)"},
                  .y_fit_from = 0.05,
                  .x_range = x_range};
  if (half_window > 0)
    train.note = "faint: logged values; bold: mean of " + std::to_string(2 * half_window + 1) + " around each";
  LinePanel val{.title = "Validation loss",
                .axes = {"tokens seen", "cross-entropy (nats / token)"},
                .y_fit_from = 0.1,
                .x_range = x_range};
  for (size_t i = 0; i < r.models.size(); ++i) {
    const auto& m = r.models[i];
    Series raw{.name = model_label(r, i),
               .colour = model_colour(r, i),
               .width = half_window > 0 ? 1 : 1.6,
               .opacity = half_window > 0 ? 0.3 : 1};
    for (const auto& p : m.train.curve) raw.points.emplace_back(p.tokens, p.loss);
    if (half_window > 0) {
      Series smooth{.name = model_label(r, i), .colour = model_colour(r, i), .points = moving_average(raw.points, half_window)};
      train.series.push_back(std::move(raw));
      train.series.push_back(std::move(smooth));
    } else {
      train.series.push_back(std::move(raw));
    }
    Series v{.name = model_label(r, i), .colour = model_colour(r, i), .markers = true, .width = 2};
    for (const auto& p : m.train.val_curve) v.points.emplace_back(p.tokens, p.loss);
    val.series.push_back(std::move(v));
  }
  return line_figure("Loss curves", setup_line(r),
                     model_legend(r, LegendMark::line, [](const ModelResults&) { return true; }), {train, val},
                     "loss_curves.svg", "Language modelling",
                     "Cross-entropy of each model on its training batches (left) and on the held-out validation "
                     "split (right), against the number of training tokens seen. Every model trains on the same "
                     "token stream in the same order. Lower is better; the paper reports DIFF Transformer reaching "
                     "a given loss with fewer tokens and parameters than the baseline.");
}

namespace {

// NIAH heatmap rows: (context, needles, queried); columns: depth.
using NiahRow = std::tuple<int64_t, int64_t, int64_t>;

// One model's NIAH panel; cells measured twice are pooled (weighted by their samples).
HeatmapPanel niah_panel(const ModelResults& m, const std::string& label, const std::vector<NiahRow>& rows,
                        const std::vector<double>& columns) {
  HeatmapPanel p;
  p.title = label + "  (mean " + format_fixed(results::mean_cell_accuracy(*m.niah), 2) + ")";
  p.column_title = "depth of the needles in the context";
  for (const double d : columns) p.column_labels.push_back(percent(d));
  std::vector<std::vector<double>> correct(rows.size(), std::vector<double>(columns.size(), 0));
  std::vector<std::vector<double>> samples = correct;
  for (const auto& c : m.niah->cells) {
    if (!std::isfinite(c.accuracy)) continue;
    const size_t ri =
        static_cast<size_t>(std::find(rows.begin(), rows.end(), NiahRow{c.context, c.needles, c.queried}) - rows.begin());
    const size_t ci = static_cast<size_t>(std::find(columns.begin(), columns.end(), c.depth) - columns.begin());
    const double n = static_cast<double>(std::max<int64_t>(c.samples, 1));
    correct[ri][ci] += c.accuracy * n;
    samples[ri][ci] += n;
  }
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    const auto [context, needles, queried] = rows[ri];
    p.row_labels.push_back(format_count(static_cast<double>(context)) + " tokens, N=" + std::to_string(needles) +
                           " R=" + std::to_string(queried));
    p.values.emplace_back();
    p.tooltips.emplace_back();
    for (size_t ci = 0; ci < columns.size(); ++ci) {
      const double n = samples[ri][ci];
      const double acc = n > 0 ? correct[ri][ci] / n : kNan;
      p.values.back().push_back(acc);
      p.tooltips.back().push_back(
          m.name + ", " + p.row_labels.back() + ", depth " + percent(columns[ci]) + ": " +
          (n > 0 ? format_fixed(acc, 3) + " over " + format_fixed(n, 0) + " samples" : "not measured"));
    }
  }
  return p;
}

}  // namespace

ReportChart niah_heatmap_chart(const ExperimentResults& r) {
  std::set<NiahRow> row_keys;
  std::set<double> depths;
  for (const auto& m : r.models)
    if (m.niah)
      for (const auto& c : m.niah->cells) row_keys.insert({c.context, c.needles, c.queried}), depths.insert(c.depth);
  if (row_keys.empty()) return {};
  const auto first_niah =
      std::find_if(r.models.begin(), r.models.end(), [](const ModelResults& m) { return m.niah.has_value(); });
  const std::vector<NiahRow> rows(row_keys.begin(), row_keys.end());
  const std::vector<double> columns(depths.begin(), depths.end());
  std::vector<HeatmapPanel> panels;
  for (size_t i = 0; i < r.models.size(); ++i)
    if (r.models[i].niah) panels.push_back(niah_panel(r.models[i], model_label(r, i), rows, columns));

  HeatmapGeometry g;
  for (const auto& p : panels)
    for (const auto& label : p.row_labels)
      g.row_label_width = std::max(g.row_label_width, estimated_text_width(label, 11) + 14);
  HeatmapGeometry beside = g;  // panels right of the first in a row share its row labels
  beside.show_row_labels = false;
  const double cells_w = heatmap_panel_width(panels[0], beside), panel_h = heatmap_panel_height(panels[0], g);
  const auto per_row = static_cast<size_t>(
      std::max(1.0, std::floor((kWidth - 2 * kFigureMargin - g.row_label_width + kPanelGap) / (cells_w + kPanelGap))));
  const double width =
      std::max(kWidth, 2 * kFigureMargin + g.row_label_width +
                           static_cast<double>(std::min(per_row, panels.size())) * (cells_w + kPanelGap));
  SvgCanvas svg(width, 100);
  double y = draw_figure_header(svg, "Multi-needle retrieval (NIAH) accuracy",
                                "N needles in the context, R of them asked for; exact match of the answer | " +
                                    std::to_string(first_niah->niah->samples_per_cell) + " samples per cell",
                                {});
  const ColourScale scale{.lo = 0, .hi = 1, .colour = viridis, .title = "accuracy", .decimals = 2};
  y += 4;
  for (size_t i = 0; i < panels.size(); ++i) {
    const size_t col = i % per_row;
    if (i > 0 && col == 0) y += panel_h + 16;
    const double cells_x = kFigureMargin + g.row_label_width + static_cast<double>(col) * (cells_w + kPanelGap);
    const double x = col == 0 ? kFigureMargin : cells_x;
    draw_heatmap_panel(svg, x, y, panels[i], scale, col == 0 ? g : beside);
  }
  y += panel_h + 14;
  y += draw_colour_bar(svg, kFigureMargin + g.row_label_width, y, 220, scale);
  svg.set_height(y + kFigureMargin);
  return finished(svg, "niah_heatmap.svg", "Retrieval (paper: Table 2)",
                  "Share of prompts in which the model generated the exact value of a queried needle, for each "
                  "context length and needle setting (rows) and depth of the needles in the context (columns); "
                  "one panel per model, grey cells were not measured. The paper (Table 2) finds DIFF Transformer "
                  "far more accurate than the baseline as N and R grow.");
}

ReportChart attention_map_chart(const ExperimentResults& r) {
  AttentionFigure f;
  f.title = "Attention over the context for one retrieval prompt";
  f.subtitle = "normalised attention of the query row over all context tokens; the outline marks the answer";
  for (size_t i = 0; i < r.models.size(); ++i) {
    const ModelResults& m = r.models[i];
    if (!m.attention_map) continue;
    const auto& a = *m.attention_map;
    f.rows.push_back({model_label(r, i),
                      "layer " + std::to_string(a.layer) + ", head " + std::to_string(a.head) + ", query at " +
                          std::to_string(a.query_position),
                      a.tokens, a.weights, static_cast<size_t>(a.answer_begin), static_cast<size_t>(a.answer_end)});
  }
  if (f.rows.empty()) return {};
  return finished(attention_figure(f), "attention_map.svg", "Attention noise (paper: Figure 1)",
                  "How much of its attention each model's query row gives to every token of one retrieval prompt "
                  "(darker: more), with the answer span outlined and the share of attention on it at the right. "
                  "Below, a zoom on the tokens around the answer. The paper's Figure 1 shows the baseline spreading "
                  "attention over irrelevant context (attention noise) where DIFF Transformer concentrates it on "
                  "the answer.");
}

ReportChart outlier_chart(const ExperimentResults& r) {
  const auto has = [](const ModelResults& m) { return m.outliers.has_value(); };
  BarPanel logits{
      .title = "|attention logits|", .axes = {"", "magnitude"}, .groups = {"top-1", "top-2", "top-3", "median"}};
  BarPanel hidden{.title = "|hidden states|", .axes = {"", "magnitude"}, .groups = logits.groups};
  logits.values.assign(4, {});
  hidden.values.assign(4, {});
  int64_t tokens = 0;
  for (size_t i = 0; i < r.models.size(); ++i) {
    const auto& m = r.models[i];
    if (!has(m)) continue;
    tokens = std::max(tokens, m.outliers->tokens);
    for (BarPanel* p : {&logits, &hidden}) {
      p->series_names.push_back(model_label(r, i));
      p->series_colours.push_back(model_colour(r, i));
    }
    const auto add = [](BarPanel& p, const results::OutlierStats& s) {
      const double v[4] = {s.top1, s.top2, s.top3, s.median};
      for (size_t g = 0; g < 4; ++g) p.values[g].push_back(v[g]);
    };
    add(logits, m.outliers->attention_logits);
    add(hidden, m.outliers->hidden_states);
  }
  if (logits.series_names.empty()) return {};
  SvgCanvas svg(kWidth, 100);
  const double y =
      draw_figure_header(svg, "Largest and median activation magnitudes",
                         "absolute values over a sample of " + format_count(static_cast<double>(tokens)) + " tokens",
                         model_legend(r, LegendMark::box, has));
  const auto areas = split_row({kFigureMargin, y, kWidth - 2 * kFigureMargin, kPanelHeight}, 2, kPanelGap);
  draw_bar_panel(svg, areas[0], logits);
  draw_bar_panel(svg, areas[1], hidden);
  svg.set_height(y + kPanelHeight + kFigureMargin);
  return finished(svg, "outliers.svg", "Activation outliers (paper: Table 5)",
                  "The three largest and the median absolute values of the attention logits (left) and of the "
                  "hidden states (right). A large top-1 to median ratio means outliers, which make low-bit "
                  "quantization lose precision. The paper (Table 5) finds DIFF Transformer's top activations "
                  "several times smaller than the baseline's. Axes switch to a log scale when values span more "
                  "than a factor of 30.");
}

ReportChart quantization_chart(const ExperimentResults& r) {
  const auto has = [](const ModelResults& m) { return !m.quantization.empty(); };
  std::set<int64_t> bit_set;
  for (const auto& m : r.models)
    for (const auto& q : m.quantization) bit_set.insert(q.bits);
  if (bit_set.empty()) return {};
  // fp32 (bits 0) first, then fewer and fewer bits: quality should fall left to right.
  std::vector<int64_t> bits(bit_set.begin(), bit_set.end());
  std::sort(bits.begin(), bits.end(), [](int64_t a, int64_t b) { return a == 0 ? b != 0 : b != 0 && a > b; });
  std::vector<std::string> labels;
  for (const int64_t b : bits) labels.push_back(b == 0 ? "fp32" : std::to_string(b));

  LinePanel loss{.title = "Validation loss",
                 .axes = {"bits of the attention logits", "cross-entropy (nats / token)"},
                 .x_categories = labels};
  LinePanel accuracy{.title = "NIAH accuracy",
                     .axes = {"bits of the attention logits", "accuracy"},
                     .x_categories = labels,
                     .y_range = std::pair{0.0, 1.0}};
  bool any_accuracy = false;
  for (size_t i = 0; i < r.models.size(); ++i) {
    const auto& m = r.models[i];
    if (!has(m)) continue;
    Series l{.name = model_label(r, i), .colour = model_colour(r, i), .markers = true};
    Series a = l;
    for (size_t k = 0; k < bits.size(); ++k) {
      const auto q = std::find_if(m.quantization.begin(), m.quantization.end(),
                                  [&](const results::QuantizationPoint& p) { return p.bits == bits[k]; });
      const double x = static_cast<double>(k);
      l.points.emplace_back(x, q == m.quantization.end() ? kNan : q->val_loss);
      a.points.emplace_back(x, q == m.quantization.end() ? kNan : q->niah_accuracy_or_nan());
      any_accuracy |= q != m.quantization.end() && std::isfinite(q->niah_accuracy_or_nan());
    }
    loss.series.push_back(std::move(l));
    accuracy.series.push_back(std::move(a));
  }
  std::vector<LinePanel> panels = {loss};
  if (any_accuracy) panels.push_back(accuracy);
  return line_figure("Quality with quantized attention logits",
                     "absmax fake-quantization of the attention logits to fewer bits; fp32 = none",
                     model_legend(r, LegendMark::line_with_dot, has), panels, "quantization.svg",
                     "Quantization robustness (paper: Figure 8)",
                     "Validation loss (left) and NIAH accuracy (right) when the attention logits are rounded to "
                     "16, 8, 6 or 4 bits with absmax scaling, from unquantized (fp32) to the fewest bits. A flat "
                     "line is robust. The paper (Figure 8) finds DIFF Transformer losing far less accuracy than the "
                     "baseline at 6 and 4 bits, which it attributes to fewer activation outliers.");
}

ReportChart attention_allocation_chart(const ExperimentResults& r) {
  const auto has = [](const ModelResults& m) { return m.attention_allocation.has_value(); };
  LinePanel answer_depth{.title = "Attention on the answer, by depth",
                         .axes = {"depth of the answer in the context (%)", "attention share"},
                         .y_from_zero = true};
  LinePanel noise_depth{.title = "Attention noise, by depth",
                        .axes = {"depth of the answer in the context (%)", "attention share"},
                        .y_from_zero = true};
  LinePanel answer_layer{.title = "Attention on the answer, by layer",
                         .axes = {"layer", "attention share"},
                         .y_from_zero = true,
                         .x_min_step = 1};
  LinePanel noise_layer{
      .title = "Attention noise, by layer", .axes = {"layer", "attention share"}, .y_from_zero = true, .x_min_step = 1};
  std::string normalisation;
  for (size_t i = 0; i < r.models.size(); ++i) {
    const auto& m = r.models[i];
    if (!has(m)) continue;
    normalisation = m.attention_allocation->normalisation;
    const Series base{.name = model_label(r, i), .colour = model_colour(r, i), .markers = true};
    Series a = base, n = base, al = base, nl = base;
    for (const auto& p : m.attention_allocation->by_depth)
      a.points.emplace_back(100 * p.key, p.allocation.answer), n.points.emplace_back(100 * p.key, p.allocation.noise);
    for (const auto& p : m.attention_allocation->by_layer)
      al.points.emplace_back(p.key, p.allocation.answer), nl.points.emplace_back(p.key, p.allocation.noise);
    answer_depth.series.push_back(std::move(a));
    noise_depth.series.push_back(std::move(n));
    answer_layer.series.push_back(std::move(al));
    noise_layer.series.push_back(std::move(nl));
  }
  if (answer_depth.series.empty()) return {};
  const auto has_points = [](const LinePanel& p) {
    return std::any_of(p.series.begin(), p.series.end(), [](const Series& s) { return !s.points.empty(); });
  };
  std::vector<LinePanel> panels;
  if (has_points(answer_depth)) panels.insert(panels.end(), {answer_depth, noise_depth});
  if (has_points(answer_layer)) panels.insert(panels.end(), {answer_layer, noise_layer});
  if (panels.empty()) return {};
  return line_figure("Attention allocation on retrieval prompts", "normalisation: " + normalisation,
                     model_legend(r, LegendMark::line_with_dot, has), panels, "attention_allocation.svg",
                     "Attention allocation (paper: Table 3)",
                     "Share of attention that the query puts on the answer span (left) and on the rest of the context, "
                     "the noise (right), averaged over prompts, by the depth of the answer in the context and by "
                     "layer. The paper (Table 3) finds DIFF Transformer putting more attention on the answer and far "
                     "less on the noise.");
}

ReportChart seed_spread_chart(const ExperimentResults& r) {
  if (r.setup.seeds.size() < 2) return {};
  std::vector<SeedPanel> panels;
  for (const results::Metric& metric : results::seed_metrics()) {
    const std::string name = metric.name;
    if (name != "val_loss" && name != "niah_accuracy" && name != "mqar_accuracy") continue;
    SeedPanel panel{.title = metric.label, .axes = {"", name == "val_loss" ? "nats / token" : "accuracy"}};
    bool any = false;
    for (const auto& row : results::seed_comparison(r, metric)) {
      const size_t first = static_cast<size_t>(
          std::find_if(r.models.begin(), r.models.end(), [&](const ModelResults& m) { return m.name == row.variant; }) -
          r.models.begin());
      SeedColumn c{.label = row.variant, .colour = model_colour(r, first), .mean = row.summary.n ? row.summary.mean : kNan};
      for (size_t k = 0; k < row.seeds.size(); ++k) c.points.emplace_back(row.seeds[k], row.values[k]);
      if (row.summary.ci95) c.interval = std::pair{row.summary.ci95->low, row.summary.ci95->high};
      any = any || row.summary.n > 0;
      panel.columns.push_back(std::move(c));
    }
    if (any) panels.push_back(std::move(panel));
  }
  if (panels.empty()) return {};
  std::string seeds;
  for (const int64_t s : r.setup.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  SvgCanvas svg(kWidth, 100);
  const double y = draw_figure_header(svg, "Spread over seeds", "seeds " + seeds + "; dots: one run each", {});
  const auto areas = split_row({kFigureMargin, y, kWidth - 2 * kFigureMargin, kPanelHeight}, panels.size(), kPanelGap);
  for (size_t i = 0; i < panels.size(); ++i) draw_seed_panel(svg, areas[i], panels[i]);
  svg.set_height(y + kPanelHeight + kFigureMargin);
  return finished(svg, "seed_spread.svg", "Spread over seeds",
                  "Each dot is one training run (one seed); the bar across a column is the variant's mean and the "
                  "whisker the 95% confidence interval of that mean (Student t). Where two variants' dots overlap, "
                  "one seed cannot tell them apart; the table above says which paired differences to the baseline "
                  "are outside the seed noise.");
}

ReportCharts build_report_charts(const ExperimentResults& results) {
  ReportCharts out;
  const auto add = [&](ReportChart c, const char* name, const char* needs) {
    if (c.svg.empty()) out.omitted.push_back(std::string(name) + ": no model has " + needs + " results");
    else out.charts.push_back(std::move(c));
  };
  add(loss_curves_chart(results), "loss curves", "train");
  add(niah_heatmap_chart(results), "NIAH accuracy heatmap", "niah");
  add(attention_map_chart(results), "attention map of one prompt", "attention_map");
  add(attention_allocation_chart(results), "attention allocation", "attention_allocation");
  add(outlier_chart(results), "activation outliers", "outliers");
  add(quantization_chart(results), "quantization curve", "quantization");
  if (results.setup.seeds.size() > 1) add(seed_spread_chart(results), "spread over seeds", "train");
  return out;
}

}  // namespace difftx::report
