// Grouped bar panels: one group per category, one bar per series (model) in each group, the
// value written above each bar; a log axis when the values span too many orders of magnitude
// for a linear one.
#pragma once
#include <string>
#include <vector>

#include "report/axis.h"
#include "report/svg_canvas.h"

namespace difftx::report {

struct BarPanel {
  std::string title{};
  AxisTitles axes{};
  std::vector<std::string> groups{};        // category labels along x
  std::vector<std::string> series_names{};  // in tooltips
  std::vector<std::string> series_colours{};
  std::vector<std::vector<double>> values{};  // [group][series]; NaN: no bar, "n/a"
  // Log axis when every value is positive and max/min exceeds this (0: never).
  double log_when_ratio_above = 30;
};

// True when the panel's values call for a log axis (see BarPanel::log_when_ratio_above).
bool bar_panel_uses_log(const BarPanel& panel);
void draw_bar_panel(SvgCanvas& svg, const Rect& area, const BarPanel& panel);

}  // namespace difftx::report
