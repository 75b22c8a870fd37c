#include "report/axis.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.h"
#include "report/svg_text.h"

namespace difftx::report {
namespace {

const ShapeStyle kGrid{.stroke = "#e3e3e3", .stroke_width = 1};
const ShapeStyle kFrame{.stroke = "#555555", .stroke_width = 1};
const TextStyle kTickText{.size = 11, .fill = "#444444"};
const TextStyle kAxisTitle{.size = 12, .anchor = Anchor::middle, .fill = "#222222"};

}  // namespace

Ticks linear_ticks(double lo, double hi, int target, bool include_zero, double min_step) {
  DIFFTX_CHECK(std::isfinite(lo) && std::isfinite(hi), "axis: range [", lo, ", ", hi, "] is not finite");
  if (lo > hi) std::swap(lo, hi);
  if (include_zero) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  if (hi - lo <= 1e-12 * std::max(1.0, std::fabs(hi))) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= include_zero && lo == 0 ? 0 : pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(target, 1);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / power;
  const double step = std::max(min_step, (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * power);
  Ticks t;
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  for (double k = first; k <= last + 0.5; ++k) t.values.push_back(k * step);
  t.lo = t.values.front();
  t.hi = t.values.back();
  t.decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
  return t;
}

Ticks log_ticks(double lo, double hi) {
  DIFFTX_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo > 0 && hi > 0, "axis: log range [", lo, ", ", hi,
               "] must be positive and finite");
  if (lo > hi) std::swap(lo, hi);
  const int e0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int e1 = std::max(e0 + 1, static_cast<int>(std::ceil(std::log10(hi) - 1e-9)));
  Ticks t;
  t.log = true;
  const bool fine = e1 - e0 <= 3;
  for (int e = e0; e <= e1; ++e) {
    const double p = std::pow(10.0, e);
    t.values.push_back(p);
    if (fine && e < e1) {
      t.values.push_back(2 * p);
      t.values.push_back(5 * p);
    }
  }
  t.lo = t.values.front();
  t.hi = t.values.back();
  return t;
}

std::string tick_label(double value, const Ticks& ticks) {
  const double top = std::max(std::fabs(ticks.lo), std::fabs(ticks.hi));
  if (!ticks.log && top < 1e4) return format_fixed(value, ticks.decimals);
  if (!ticks.log) {  // 1.5M, not 1500000; as many decimals as the step needs
    const auto [unit, suffix] = top >= 1e9   ? std::pair{1e9, "G"}
                                : top >= 1e6 ? std::pair{1e6, "M"}
                                             : std::pair{1e3, "k"};
    const double step = ticks.values.size() > 1 ? ticks.values[1] - ticks.values[0] : top;
    const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step / unit) + 1e-9)));
    const std::string digits = format_trimmed(value / unit, decimals);
    return digits == "0" ? digits : digits + suffix;
  }
  if (value >= 1e-3 && value < 1e5) return format_significant(value, 1);
  return "1e" + std::to_string(static_cast<int>(std::lround(std::log10(value))));
}

double Scale::operator()(double v) const {
  double a = ticks.lo, b = ticks.hi;
  if (ticks.log) {
    DIFFTX_CHECK(v > 0, "axis: value ", v, " on a log axis");
    v = std::log10(v), a = std::log10(a), b = std::log10(b);
  }
  return from + (v - a) / (b - a) * (to - from);
}

void draw_axes(SvgCanvas& svg, const Rect& plot, const Scale& x, const Scale& y, const AxisTitles& titles,
               const std::vector<std::string>& x_categories) {
  TextStyle y_labels = kTickText;
  y_labels.anchor = Anchor::end;
  y_labels.centre_vertically = true;
  for (const double v : y.ticks.values) {
    const double py = y(v);
    svg.line(plot.x, py, plot.right(), py, kGrid);
    svg.text(plot.x - 6, py, tick_label(v, y.ticks), y_labels);
  }
  TextStyle x_labels = kTickText;
  x_labels.anchor = Anchor::middle;
  const double label_y = plot.bottom() + 16;
  if (x_categories.empty()) {
    for (const double v : x.ticks.values) {
      svg.line(x(v), plot.bottom(), x(v), plot.bottom() + 4, kFrame);
      svg.text(x(v), label_y, tick_label(v, x.ticks), x_labels);
    }
  } else {
    for (size_t i = 0; i < x_categories.size(); ++i) {
      const double px = x(static_cast<double>(i));
      svg.line(px, plot.bottom(), px, plot.bottom() + 4, kFrame);
      svg.text(px, label_y, x_categories[i], x_labels);
    }
  }
  svg.line(plot.x, plot.y, plot.x, plot.bottom(), kFrame);
  svg.line(plot.x, plot.bottom(), plot.right(), plot.bottom(), kFrame);
  if (!titles.x.empty()) svg.text(plot.x + plot.w / 2, plot.bottom() + 34, titles.x, kAxisTitle);
  if (!titles.y.empty()) {
    TextStyle rotated = kAxisTitle;
    rotated.rotate = -90;
    const double px = plot.x - 48, py = plot.y + plot.h / 2;
    svg.text(px, py, titles.y, rotated);
  }
}

}  // namespace difftx::report
