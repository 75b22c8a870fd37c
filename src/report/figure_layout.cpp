#include "report/figure_layout.h"

#include "core/error.h"

namespace difftx::report {
namespace {

constexpr double kLegendFont = 12;
constexpr double kMarkWidth = 26;

void draw_mark(SvgCanvas& svg, double x, double y, const LegendEntry& e) {
  if (e.mark == LegendMark::box) {
    svg.rect({x + 6, y - 6, 14, 12}, {.fill = e.colour, .css_class = "legend-mark"});
    return;
  }
  svg.line(x, y, x + kMarkWidth, y, {.stroke = e.colour, .stroke_width = 2.5, .css_class = "legend-mark"});
  if (e.mark == LegendMark::line_with_dot)
    svg.circle(x + kMarkWidth / 2, y, 3.5, {.fill = e.colour, .stroke = "#ffffff", .stroke_width = 1});
}

}  // namespace

double draw_figure_header(SvgCanvas& svg, std::string_view title, std::string_view subtitle,
                          const std::vector<LegendEntry>& legend) {
  double y = kFigureMargin + 14;
  svg.text(kFigureMargin, y, title, {.size = 16, .fill = "#111111", .bold = true, .css_class = "figure-title"});
  if (!subtitle.empty()) {
    y += 20;
    svg.text(kFigureMargin, y, subtitle, {.size = 12, .fill = "#555555"});
  }
  if (!legend.empty()) {
    y += 24;
    double x = kFigureMargin;
    for (const auto& e : legend) {
      const double w = kMarkWidth + 6 + estimated_text_width(e.label, kLegendFont) + 22;
      if (x > kFigureMargin && x + w > svg.width() - kFigureMargin) {
        x = kFigureMargin;
        y += 20;
      }
      draw_mark(svg, x, y - 4, e);
      svg.text(x + kMarkWidth + 6, y, e.label, {.size = kLegendFont, .css_class = "legend-label"});
      x += w;
    }
  }
  return y + 14;
}

std::vector<Rect> split_row(const Rect& area, size_t n, double gap) {
  DIFFTX_CHECK(n > 0, "figure: no panels to lay out");
  const double w = (area.w - gap * static_cast<double>(n - 1)) / static_cast<double>(n);
  std::vector<Rect> out;
  for (size_t i = 0; i < n; ++i) out.push_back({area.x + static_cast<double>(i) * (w + gap), area.y, w, area.h});
  return out;
}

void draw_panel_title(SvgCanvas& svg, double x, double y, std::string_view title) {
  svg.text(x, y, title, {.size = 13, .fill = "#222222", .bold = true, .css_class = "panel-title"});
}

void draw_note(SvgCanvas& svg, double x, double y, std::string_view note, Anchor anchor) {
  svg.text(x, y, note, {.size = 11, .anchor = anchor, .fill = "#777777", .css_class = "note"});
}

}  // namespace difftx::report
