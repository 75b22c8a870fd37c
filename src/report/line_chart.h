// Line panels: several series over a shared x axis, NaN values drawn as gaps.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/axis.h"
#include "report/svg_canvas.h"

namespace difftx::report {

struct Series {
  std::string name{};  // in marker tooltips
  std::string colour{};
  Points points{};       // (x, y) in x order; a NaN or infinite y breaks the line there
  bool markers = false;  // a dot at each finite point
  double width = 2;
  double opacity = 1;
};

struct LinePanel {
  std::string title{};
  AxisTitles axes{};
  std::vector<Series> series{};
  // When given, x values are positions 0..n-1 labelled with these (e.g. "fp32", "16", "8").
  std::vector<std::string> x_categories{};
  // The y axis fits the points at or after this fraction of the x range; earlier points that
  // fall outside (the first steps of a loss curve) are clipped, with a note saying so.
  double y_fit_from = 0;
  bool y_from_zero = false;
  std::optional<std::pair<double, double>> y_range{};  // fixed domain, e.g. accuracy in [0, 1]
  std::optional<std::pair<double, double>> x_range{};  // fixed domain (to align panels)
  double x_min_step = 0;                               // 1 for integer x such as layer indices
  std::string note{};                                  // grey, at the top right of the plot
};

// Draws the panel (title, axes, series) inside `area`, margins for labels included.
void draw_line_panel(SvgCanvas& svg, const Rect& area, const LinePanel& panel);

}  // namespace difftx::report
