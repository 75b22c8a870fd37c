#include "report/heatmap_chart.h"

#include <cmath>

#include "core/error.h"
#include "report/figure_layout.h"
#include "report/palette.h"
#include "report/svg_text.h"

namespace difftx::report {
namespace {

constexpr double kTitleHeight = 22, kColumnLabelHeight = 18, kColumnTitleHeight = 20;

double unit(const ColourScale& s, double v) { return s.hi > s.lo ? (v - s.lo) / (s.hi - s.lo) : 0.5; }

}  // namespace

double heatmap_panel_width(const HeatmapPanel& panel, const HeatmapGeometry& g) {
  return (g.show_row_labels ? g.row_label_width : 0) + g.cell_width * static_cast<double>(panel.column_labels.size());
}

double heatmap_panel_height(const HeatmapPanel& panel, const HeatmapGeometry& g) {
  return kTitleHeight + g.cell_height * static_cast<double>(panel.row_labels.size()) + kColumnLabelHeight +
         (panel.column_title.empty() ? 0 : kColumnTitleHeight);
}

void draw_heatmap_panel(SvgCanvas& svg, double x, double y, const HeatmapPanel& panel, const ColourScale& scale,
                        const HeatmapGeometry& g) {
  const size_t rows = panel.row_labels.size(), cols = panel.column_labels.size();
  DIFFTX_CHECK(panel.values.size() == rows, "heatmap '", panel.title, "': ", panel.values.size(), " value rows for ",
               rows, " row labels");
  DIFFTX_CHECK(panel.tooltips.empty() || panel.tooltips.size() == rows, "heatmap '", panel.title,
               "': tooltips do not match the rows");
  draw_panel_title(svg, g.show_row_labels ? x + g.row_label_width : x, y + 14, panel.title);
  const double x0 = x + (g.show_row_labels ? g.row_label_width : 0), y0 = y + kTitleHeight;
  const TextStyle row_text{.size = 11, .anchor = Anchor::end, .fill = "#333333", .centre_vertically = true};
  for (size_t r = 0; r < rows; ++r) {
    DIFFTX_CHECK(panel.values[r].size() == cols, "heatmap '", panel.title, "': row ", r, " has ",
                 panel.values[r].size(), " values for ", cols, " columns");
    const double cy = y0 + g.cell_height * static_cast<double>(r);
    if (g.show_row_labels) svg.text(x0 - 6, cy + g.cell_height / 2, panel.row_labels[r], row_text);
    for (size_t c = 0; c < cols; ++c) {
      const double v = panel.values[r][c];
      const bool missing = !std::isfinite(v);
      const std::string fill = missing ? kMissingColour : scale.colour(unit(scale, v));
      const Rect cell{x0 + g.cell_width * static_cast<double>(c), cy, g.cell_width, g.cell_height};
      const std::string tip = panel.tooltips.empty() ? "" : panel.tooltips[r].at(c);
      svg.rect(cell, {.fill = fill, .stroke = "#ffffff", .stroke_width = 1, .css_class = "cell"}, tip);
      svg.text(cell.x + cell.w / 2, cell.y + cell.h / 2, missing ? "n/a" : format_fixed(v, scale.decimals),
               {.size = 11,
                .anchor = Anchor::middle,
                .fill = missing ? "#555555" : text_colour_on(fill),
                .centre_vertically = true,
                .css_class = "cell-label"});
    }
  }
  const double label_y = y0 + g.cell_height * static_cast<double>(rows) + 14;
  for (size_t c = 0; c < cols; ++c)
    svg.text(x0 + g.cell_width * (static_cast<double>(c) + 0.5), label_y, panel.column_labels[c],
             {.size = 11, .anchor = Anchor::middle, .fill = "#333333"});
  if (!panel.column_title.empty())
    svg.text(x0 + g.cell_width * static_cast<double>(cols) / 2, label_y + kColumnTitleHeight, panel.column_title,
             {.size = 12, .anchor = Anchor::middle});
}

double draw_colour_bar(SvgCanvas& svg, double x, double y, double width, const ColourScale& scale) {
  constexpr int kSteps = 64;
  constexpr double kBarHeight = 12;
  const double step = width / kSteps;
  for (int i = 0; i < kSteps; ++i)  // each step a little wider than its slot: no hairline seams
    svg.rect({x + step * i, y, step + (i + 1 < kSteps ? 0.5 : 0), kBarHeight},
             {.fill = scale.colour((i + 0.5) / kSteps)});
  svg.rect({x, y, width, kBarHeight}, {.stroke = "#888888", .stroke_width = 0.5});
  const TextStyle tick{.size = 11, .anchor = Anchor::middle, .fill = "#444444"};
  for (const double f : {0.0, 0.5, 1.0}) {
    const double px = x + f * width;
    svg.line(px, y + kBarHeight, px, y + kBarHeight + 4, {.stroke = "#888888"});
    svg.text(px, y + kBarHeight + 16, format_fixed(scale.lo + f * (scale.hi - scale.lo), scale.decimals), tick);
  }
  if (!scale.title.empty()) svg.text(x + width + 10, y + kBarHeight - 1, scale.title, {.size = 12});
  return kBarHeight + 20;
}

}  // namespace difftx::report
