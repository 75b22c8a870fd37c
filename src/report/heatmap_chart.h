// Heatmap panels (a value per row and column, written in its cell) and their colour bar.
#pragma once
#include <string>
#include <vector>

#include "report/svg_canvas.h"

namespace difftx::report {

struct ColourScale {
  double lo = 0, hi = 1;
  std::string (*colour)(double t) = nullptr;  // t in [0, 1] -> "#rrggbb" (palette.h)
  std::string title{};                        // under the bar, e.g. "accuracy"
  int decimals = 2;                           // of the numbers in cells and on the bar
};

struct HeatmapPanel {
  std::string title{};
  std::vector<std::string> row_labels{};
  std::vector<std::string> column_labels{};
  std::string column_title{};                        // under the column labels
  std::vector<std::vector<double>> values{};         // [row][column]; NaN: missing ("n/a", grey)
  std::vector<std::vector<std::string>> tooltips{};  // same shape, or empty
};

struct HeatmapGeometry {
  double row_label_width = 120;  // px left of the cells
  bool show_row_labels = true;   // false: panels beside the first share its row labels
  double cell_width = 48, cell_height = 26;
};

// Width and height the panel needs (title, labels and cells).
double heatmap_panel_width(const HeatmapPanel& panel, const HeatmapGeometry& g);
double heatmap_panel_height(const HeatmapPanel& panel, const HeatmapGeometry& g);
void draw_heatmap_panel(SvgCanvas& svg, double x, double y, const HeatmapPanel& panel, const ColourScale& scale,
                        const HeatmapGeometry& g);

// A horizontal colour bar `width` px wide with ticks at lo, the middle and hi; returns its height.
double draw_colour_bar(SvgCanvas& svg, double x, double y, double width, const ColourScale& scale);

}  // namespace difftx::report
