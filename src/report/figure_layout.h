// What every figure shares: a title, a one-line subtitle, a legend that wraps, and panels in
// a row, each with a bold title above it.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "report/svg_canvas.h"

namespace difftx::report {

enum class LegendMark { box, line, line_with_dot };

struct LegendEntry {
  std::string label{};
  std::string colour{};
  LegendMark mark = LegendMark::box;
};

// Margin around every figure, in px.
inline constexpr double kFigureMargin = 16;

// Draws the title, the subtitle (if any) and the legend rows from the top of `svg`; returns
// the y at which the panels may start.
double draw_figure_header(SvgCanvas& svg, std::string_view title, std::string_view subtitle,
                          const std::vector<LegendEntry>& legend);

// `n` equal areas side by side across `area`, `gap` px apart.
std::vector<Rect> split_row(const Rect& area, size_t n, double gap);

void draw_panel_title(SvgCanvas& svg, double x, double y, std::string_view title);

// A grey note in a panel (no data, clipped values, ...), centred at (x, y).
void draw_note(SvgCanvas& svg, double x, double y, std::string_view note, Anchor anchor = Anchor::middle);

}  // namespace difftx::report
