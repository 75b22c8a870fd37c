// Axes: round tick values (1, 2 or 5 times a power of ten; powers of ten on log axes), the
// map from data to pixels, and drawing of frame, grid, ticks and axis titles.
#pragma once
#include <string>
#include <vector>

#include "report/svg_canvas.h"

namespace difftx::report {

struct Ticks {
  double lo = 0, hi = 1;         // the axis domain: the data range widened to the outer ticks
  std::vector<double> values{};  // ascending, lo and hi among them
  bool log = false;
  int decimals = 0;  // of linear tick labels: enough to tell neighbours apart
};

// About `target` ticks covering [lo, hi] (lo > hi is swapped; lo == hi is widened), at least
// min_step apart (1 for layer indices). With include_zero the domain reaches 0. NaN or
// infinite bounds: Error.
Ticks linear_ticks(double lo, double hi, int target = 5, bool include_zero = false, double min_step = 0);
// Powers of ten covering [lo, hi] (both > 0); with 2 and 5 times them when that gives at most
// three decades.
Ticks log_ticks(double lo, double hi);
std::string tick_label(double value, const Ticks& ticks);

// Data -> pixel along one axis: the domain [ticks.lo, ticks.hi] onto [from, to].
struct Scale {
  Ticks ticks{};
  double from = 0, to = 1;
  double operator()(double v) const;
};

struct AxisTitles {
  std::string x{}, y{};
};

// Light horizontal grid at the y ticks, the frame's left and bottom lines, tick labels and
// axis titles. x_categories, when given, label integer positions 0..n-1 instead of x ticks.
void draw_axes(SvgCanvas& svg, const Rect& plot, const Scale& x, const Scale& y, const AxisTitles& titles,
               const std::vector<std::string>& x_categories = {});

}  // namespace difftx::report
