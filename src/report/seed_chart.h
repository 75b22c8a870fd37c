// A seed-spread panel: one column per variant with a dot per seed, the mean as a bar across the
// column and the 95% interval of the mean as a whisker, so a reader sees whether the difference
// between two variants is larger than the spread of one.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/axis.h"
#include "report/svg_canvas.h"

namespace difftx::report {

struct SeedColumn {
  std::string label{}, colour{};
  std::vector<std::pair<int64_t, double>> points{};  // (seed, value); non-finite values are not drawn
  double mean = 0;
  std::optional<std::pair<double, double>> interval{};  // none with fewer than two seeds
};

struct SeedPanel {
  std::string title{};
  AxisTitles axes{};
  std::vector<SeedColumn> columns{};
};

void draw_seed_panel(SvgCanvas& svg, const Rect& area, const SeedPanel& panel);

}  // namespace difftx::report
