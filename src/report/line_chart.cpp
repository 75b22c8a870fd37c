#include "report/line_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/figure_layout.h"
#include "report/svg_text.h"

namespace difftx::report {
namespace {

constexpr double kLeft = 62, kRight = 14, kTop = 26, kBottom = 44;

bool finite_point(const std::pair<double, double>& p) { return std::isfinite(p.first) && std::isfinite(p.second); }

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double v) { lo = std::min(lo, v), hi = std::max(hi, v); }
  bool empty() const { return lo > hi; }
};

}  // namespace

void draw_line_panel(SvgCanvas& svg, const Rect& area, const LinePanel& panel) {
  const Rect plot{area.x + kLeft, area.y + kTop, area.w - kLeft - kRight, area.h - kTop - kBottom};
  draw_panel_title(svg, plot.x, area.y + 14, panel.title);

  Range xr, yr;
  for (const auto& s : panel.series)
    for (const auto& p : s.points)
      if (finite_point(p)) xr.add(p.first);
  const double fit_from = xr.empty() ? 0 : xr.lo + panel.y_fit_from * (xr.hi - xr.lo);
  for (const auto& s : panel.series)
    for (const auto& p : s.points)
      if (finite_point(p) && p.first >= fit_from) yr.add(p.second);

  const bool categorical = !panel.x_categories.empty();
  Scale x, y;
  if (categorical) {
    x.ticks.lo = -0.5, x.ticks.hi = static_cast<double>(panel.x_categories.size()) - 0.5;
  } else {
    const auto [lo, hi] = panel.x_range ? *panel.x_range : xr.empty() ? std::pair{0.0, 1.0} : std::pair{xr.lo, xr.hi};
    x.ticks = linear_ticks(lo, hi, 6, false, panel.x_min_step);
  }
  x.from = plot.x, x.to = plot.right();
  if (panel.y_range) y.ticks = linear_ticks(panel.y_range->first, panel.y_range->second);
  else y.ticks = yr.empty() ? linear_ticks(0, 1) : linear_ticks(yr.lo, yr.hi, 5, panel.y_from_zero);
  y.from = plot.bottom(), y.to = plot.y;
  draw_axes(svg, plot, x, y, panel.axes, panel.x_categories);
  if (!panel.note.empty()) draw_note(svg, plot.right() - 4, plot.y + 12, panel.note, Anchor::end);

  if (yr.empty()) {
    draw_note(svg, plot.x + plot.w / 2, plot.y + plot.h / 2, "no data");
    return;
  }
  bool clipped = false;
  svg.begin_clip({plot.x - 5, plot.y - 5, plot.w + 10, plot.h + 10});
  for (const auto& s : panel.series) {
    const ShapeStyle line{.stroke = s.colour, .stroke_width = s.width, .opacity = s.opacity, .css_class = "series"};
    Points run;  // the current unbroken stretch
    const auto flush = [&] {
      if (run.size() == 1 && !s.markers) svg.circle(run[0].first, run[0].second, s.width, {.fill = s.colour});
      if (run.size() > 1) svg.polyline(run, line);
      run.clear();
    };
    for (const auto& p : s.points) {
      if (!finite_point(p)) {
        flush();
        continue;
      }
      const double py = y(p.second);
      clipped |= p.second > y.ticks.hi || p.second < y.ticks.lo;
      run.emplace_back(x(p.first), py);
    }
    flush();
  }
  for (const auto& s : panel.series) {
    if (!s.markers) continue;
    for (const auto& p : s.points) {
      if (!finite_point(p)) continue;
      const std::string tip = s.name + ": " +
                              (categorical && p.first >= 0 && p.first < panel.x_categories.size()
                                   ? panel.x_categories[static_cast<size_t>(p.first)]
                                   : format_significant(p.first, 4)) +
                              " -> " + format_significant(p.second, 4);
      svg.circle(x(p.first), y(p.second), 3.5,
                 {.fill = s.colour, .stroke = "#ffffff", .stroke_width = 1, .css_class = "marker"}, tip);
    }
  }
  svg.end_clip();
  if (clipped)
    draw_note(svg, plot.right() - 4, plot.y + (panel.note.empty() ? 12 : 27), "early values off the scale are cut off",
              Anchor::end);
}

}  // namespace difftx::report
