#include "report/seed_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/figure_layout.h"
#include "report/svg_text.h"

namespace difftx::report {
namespace {

constexpr double kLeft = 62, kRight = 10, kTop = 26, kBottom = 44;
constexpr double kHalfWidth = 16;  // of the mean's bar and the spread of the dots, px

}  // namespace

void draw_seed_panel(SvgCanvas& svg, const Rect& area, const SeedPanel& panel) {
  const Rect plot{area.x + kLeft, area.y + kTop, area.w - kLeft - kRight, area.h - kTop - kBottom};
  draw_panel_title(svg, plot.x, area.y + 14, panel.title);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const auto extend = [&](double v) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  };
  std::vector<std::string> labels;
  for (const SeedColumn& c : panel.columns) {
    labels.push_back(c.label);
    for (const auto& [seed, v] : c.points) extend(v);
    if (c.interval) extend(c.interval->first), extend(c.interval->second);
  }
  Scale x, y;
  x.ticks.lo = -0.5, x.ticks.hi = static_cast<double>(panel.columns.size()) - 0.5;
  x.from = plot.x, x.to = plot.right();
  y.ticks = lo > hi ? linear_ticks(0, 1) : linear_ticks(lo, hi);
  y.from = plot.bottom(), y.to = plot.y;
  draw_axes(svg, plot, x, y, panel.axes, labels);
  if (lo > hi) {
    draw_note(svg, plot.x + plot.w / 2, plot.y + plot.h / 2, "no data");
    return;
  }
  for (size_t k = 0; k < panel.columns.size(); ++k) {
    const SeedColumn& c = panel.columns[k];
    const double cx = x(static_cast<double>(k));
    if (c.interval) {
      const ShapeStyle whisker{.stroke = c.colour, .stroke_width = 1.5, .css_class = "interval"};
      const double top = y(c.interval->second), bottom = y(c.interval->first);
      svg.line(cx, top, cx, bottom, whisker);
      svg.line(cx - 5, top, cx + 5, top, whisker);
      svg.line(cx - 5, bottom, cx + 5, bottom, whisker);
    }
    if (std::isfinite(c.mean))
      svg.rect({cx - kHalfWidth, y(c.mean) - 1.5, 2 * kHalfWidth, 3}, {.fill = c.colour, .css_class = "mean"},
               c.label + ": mean " + format_significant(c.mean, 4) +
                   (c.interval ? ", 95% interval [" + format_significant(c.interval->first, 4) + ", " +
                                     format_significant(c.interval->second, 4) + "]"
                               : ""));
    const size_t n = c.points.size();
    for (size_t i = 0; i < n; ++i) {
      const auto& [seed, v] = c.points[i];
      if (!std::isfinite(v)) continue;
      // Dots spread across the column in seed order, so equal values stay visible.
      const double dx = n > 1 ? -kHalfWidth + 2 * kHalfWidth * static_cast<double>(i) / static_cast<double>(n - 1) : 0;
      svg.circle(cx + dx, y(v), 3.5, {.fill = "#ffffff", .stroke = c.colour, .stroke_width = 1.5, .css_class = "seed"},
                 c.label + ", seed " + std::to_string(seed) + ": " + format_significant(v, 4));
    }
  }
}

}  // namespace difftx::report
