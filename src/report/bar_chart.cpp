#include "report/bar_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "report/figure_layout.h"
#include "report/svg_text.h"

namespace difftx::report {
namespace {

constexpr double kLeft = 62, kRight = 10, kTop = 26, kBottom = 44;

}  // namespace

bool bar_panel_uses_log(const BarPanel& panel) {
  if (panel.log_when_ratio_above <= 0) return false;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& group : panel.values)
    for (const double v : group) {
      if (!std::isfinite(v)) continue;
      if (v <= 0) return false;
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
  return hi > 0 && hi / lo > panel.log_when_ratio_above;
}

void draw_bar_panel(SvgCanvas& svg, const Rect& area, const BarPanel& panel) {
  const size_t groups = panel.groups.size(), series = panel.series_names.size();
  DIFFTX_CHECK(panel.values.size() == groups && panel.series_colours.size() == series, "bar panel '", panel.title,
               "': ", panel.values.size(), " value groups and ", panel.series_colours.size(), " colours for ", groups,
               " groups and ", series, " series");
  const Rect plot{area.x + kLeft, area.y + kTop, area.w - kLeft - kRight, area.h - kTop - kBottom};
  draw_panel_title(svg, plot.x, area.y + 14, panel.title);

  const bool log = bar_panel_uses_log(panel);
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  for (const auto& group : panel.values) {
    DIFFTX_CHECK(group.size() == series, "bar panel '", panel.title, "': a group has ", group.size(), " values for ",
                 series, " series");
    for (const double v : group)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  const bool empty = lo > hi;
  Scale x, y;
  x.ticks.lo = -0.5, x.ticks.hi = static_cast<double>(groups) - 0.5;
  x.from = plot.x, x.to = plot.right();
  // Room above the tallest bar for its label: 12% of a linear axis, a factor 1.6 of a log one.
  if (empty) y.ticks = linear_ticks(0, 1);
  else y.ticks = log ? log_ticks(lo, hi * 1.6) : linear_ticks(std::min(lo, 0.0), hi * 1.12, 5, true);
  y.from = plot.bottom(), y.to = plot.y;
  AxisTitles titles = panel.axes;
  if (log && !titles.y.empty()) titles.y += " (log scale)";
  draw_axes(svg, plot, x, y, titles, panel.groups);
  if (empty) {
    draw_note(svg, plot.x + plot.w / 2, plot.y + plot.h / 2, "no data");
    return;
  }

  const double group_width = plot.w / static_cast<double>(std::max<size_t>(groups, 1));
  const double bar_width = std::min(34.0, group_width * 0.8 / static_cast<double>(std::max<size_t>(series, 1)));
  const double base = log ? y.ticks.lo : 0.0;
  const TextStyle value_text{.size = 9.5, .anchor = Anchor::middle, .fill = "#333333", .css_class = "bar-label"};
  for (size_t g = 0; g < groups; ++g) {
    const double left = x(static_cast<double>(g)) - bar_width * static_cast<double>(series) / 2;
    for (size_t s = 0; s < series; ++s) {
      const double v = panel.values[g][s];
      const double bx = left + bar_width * static_cast<double>(s);
      if (!std::isfinite(v)) {
        svg.text(bx + bar_width / 2, y(base) - 4, "n/a",
                 {.size = 9.5, .anchor = Anchor::middle, .fill = "#777777", .css_class = "bar-missing"});
        continue;
      }
      const double top = y(v), bottom = y(base);
      svg.rect({bx + 1, std::min(top, bottom), bar_width - 2, std::fabs(bottom - top)},
               {.fill = panel.series_colours[s], .css_class = "bar"},
               panel.series_names[s] + ", " + panel.groups[g] + ": " + format_significant(v, 4));
      svg.text(bx + bar_width / 2, std::min(top, bottom) - 3, format_significant(v, 3), value_text);
    }
  }
}

}  // namespace difftx::report
