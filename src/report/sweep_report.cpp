#include "report/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "io/atomic_file.h"
#include "report/figure_layout.h"
#include "report/line_chart.h"
#include "report/palette.h"
#include "report/report_page.h"
#include "report/svg_text.h"

namespace difftx::report {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr double kWidth = 980, kPanelHeight = 340, kPanelGap = 28;

struct AxisText {
  const char* key;    // in sweep.json's "fits"
  const char* title;  // of the panel
  const char* x;      // axis title
  const char* noun;   // in sentences
};
constexpr AxisText kAxes[] = {
    {"parameters", "Loss against model size", "log10 non-embedding parameters", "non-embedding parameters"},
    {"tokens", "Loss against training tokens", "log10 training tokens", "training tokens"}};

std::vector<std::string> variants_of(const json& sweep) { return sweep.at("setup").at("variants"); }

std::string interval(const json& summary) {
  if (summary.at("ci95").is_null()) return "no interval (one seed)";
  return "95% interval " + format_fixed(100 * summary["ci95"][0].get<double>(), 0) + "-" +
         format_fixed(100 * summary["ci95"][1].get<double>(), 0) + "%";
}

// Said when a seed's matching size lies outside the sizes the sweep measured: the fit is then
// extended past its data, and the ratio says more about the fit's slope than about the models.
std::string extrapolation_note(const json& fit, const json& matching, const char* noun) {
  const int64_t outside = matching.value("extrapolated_seeds", int64_t{0});
  if (outside == 0) return "";
  return "; in " + std::to_string(outside) + " of " + std::to_string(matching["per_seed"].size()) +
         " seeds that size lies outside the measured " + noun + " (" +
         format_grouped(fit["measured"][0].get<double>()) + " to " + format_grouped(fit["measured"][1].get<double>()) +
         "), an extrapolation of the fitted law rather than a measurement";
}

}  // namespace

ReportChart sweep_chart(const json& sweep) {
  const std::vector<std::string> variants = variants_of(sweep);
  std::vector<LinePanel> panels;
  for (const AxisText& axis : kAxes) {
    const json& fit = sweep.at("fits").at(axis.key);
    LinePanel panel{.title = axis.title, .axes = {axis.x, "validation loss (nats / token)"}};
    for (size_t v = 0; v < variants.size(); ++v) {
      // The runs of each seed, joined in x order, faint.
      std::map<int64_t, Points> by_seed;
      double lo = INFINITY, hi = 0;
      for (const json& p : sweep.at("points")) {
        const json& on = p["axes"];
        if (p["variant"] != variants[v] || p["val_loss"].is_null() || std::find(on.begin(), on.end(), axis.key) == on.end())
          continue;
        const double x = p[fit["x"].get<std::string>()].get<double>();
        by_seed[p["seed"].get<int64_t>()].emplace_back(std::log10(x), p["val_loss"].get<double>());
        lo = std::min(lo, x), hi = std::max(hi, x);
      }
      for (auto& [seed, points] : by_seed) {
        std::sort(points.begin(), points.end());
        panel.series.push_back({.name = variants[v] + ", seed " + std::to_string(seed),
                                .colour = category_colour(v), .points = points, .markers = true, .width = 1,
                                .opacity = 0.45});
      }
      // The fit: mean over seeds of log a and of b, drawn across the measured range.
      const json& laws = fit["variants"][variants[v]]["per_seed"];
      if (laws.empty() || !(hi > lo)) continue;
      double log_a = 0, b = 0;
      for (const json& l : laws) log_a += std::log(l["a"].get<double>()) / laws.size(), b += l["b"].get<double>() / laws.size();
      Series line{.name = variants[v] + " power law", .colour = category_colour(v), .width = 2.2};
      for (int k = 0; k <= 16; ++k) {
        const double x = lo * std::pow(hi / lo, k / 16.0);
        line.points.emplace_back(std::log10(x), std::exp(log_a) * std::pow(x, b));
      }
      panel.series.push_back(std::move(line));
    }
    panels.push_back(std::move(panel));
  }
  std::vector<LegendEntry> legend;
  for (size_t v = 0; v < variants.size(); ++v) legend.push_back({variants[v], category_colour(v), LegendMark::line_with_dot});
  SvgCanvas svg(kWidth, 100);
  const double y = draw_figure_header(svg, "Scaling of validation loss", "preset " + sweep["setup"]["preset"].get<std::string>() +
                                      " scaled in width; dots: one run each, lines: power laws L = a x^b", legend);
  const auto areas = split_row({kFigureMargin, y, kWidth - 2 * kFigureMargin, kPanelHeight}, 2, kPanelGap);
  for (size_t i = 0; i < panels.size(); ++i) draw_line_panel(svg, areas[i], panels[i]);
  svg.set_height(y + kPanelHeight + kFigureMargin);
  return {"sweep.svg", "Scaling (paper: Figure 3)",
          "Validation loss of every run against non-embedding parameters at equal tokens (left) and against "
          "training tokens at one width (right), both log10. A line below another means less loss for the same "
          "size; the paper finds DIFF's line below the baseline's, reaching its loss with about 62-65% of the "
          "parameters or tokens.",
          svg.finish(), svg.width(), svg.height()};
}

std::string sweep_page_html(const json& sweep, const ReportChart& chart) {
  const json& setup = sweep.at("setup");
  std::string html = page_head("difftx scaling sweep");
  html += "<header><h1>Scaling sweep: " + xml_escape(setup["preset"].get<std::string>()) +
          " preset in several widths</h1><p class=\"meta\">raw numbers: <a href=\"sweep.json\">sweep.json</a></p></header>\n";
  html += "<section id=\"matching\"><h2>What each variant needs to match the baseline</h2><ul>";
  for (const AxisText& axis : kAxes) {
    const json& fit = sweep.at("fits").at(axis.key);
    for (const auto& [variant, m] : fit["matching"].items()) {
      const json& r = m["ratio"];
      if (r["mean"].is_null()) continue;
      html += "<li>" + xml_escape(variant) + " reaches the baseline's loss at " +
              xml_escape(format_grouped(fit["at"].get<double>())) + " " + axis.noun + " with " +
              format_fixed(100 * r["mean"].get<double>(), 0) + "% of them (geometric mean over seeds, " + interval(r) + ", " +
              std::to_string(r["n"].get<int64_t>()) + " seeds)" +
              (r["ci95"].is_null() ? "" : r["ci95"][1].get<double>() < 1   ? ": fewer, outside the seed noise"
                                          : r["ci95"][0].get<double>() > 1 ? ": more, outside the seed noise"
                                                                           : ": the interval holds 100%, within the seed noise") +
              extrapolation_note(fit, m, axis.noun) + ".</li>";
    }
  }
  html += "</ul><p>Per seed, a power law L = a x<sup>b</sup> is fitted to each variant's runs (least squares on the "
          "logs); the ratio is the x at which the variant's law reaches the loss the baseline's law gives at the "
          "largest baseline point, over that point's x. The paper (Figure 3) finds about 62-65% for DIFF.</p>";
  html += "<div class=\"table-wrap\"><table><tr><th>axis</th><th>model</th><th>exponent b (mean)</th><th>95% interval</th></tr>";
  for (const AxisText& axis : kAxes)
    for (const auto& [variant, v] : sweep["fits"][axis.key]["variants"].items()) {
      const json& e = v["exponent"];
      html += "<tr><td>" + std::string(axis.noun) + "</td><td>" + xml_escape(variant) + "</td><td>" +
              (e["mean"].is_null() ? "n/a" : format_significant(e["mean"].get<double>(), 3)) + "</td><td>" +
              (e["ci95"].is_null() ? "n/a"
                                   : format_significant(e["ci95"][0].get<double>(), 3) + " to " +
                                         format_significant(e["ci95"][1].get<double>(), 3)) +
              "</td></tr>";
    }
  html += "</table></div></section>\n" + chart_figure(chart);
  html += "<footer>Rendered by <code>difftx experiment sweep</code>; each point's runs and their own report are "
          "under points/.</footer>\n</main></body></html>\n";
  return html;
}

std::vector<fs::path> write_sweep_report(const json& sweep, const fs::path& out_dir) {
  const ReportChart chart = sweep_chart(sweep);
  io::write_file_atomically(out_dir / chart.file, chart.svg);
  io::write_file_atomically(out_dir / "index.html", sweep_page_html(sweep, chart));
  return {out_dir / chart.file, out_dir / "index.html"};
}

}  // namespace difftx::report
