#include "report/attention_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "report/axis.h"
#include "report/figure_layout.h"
#include "report/heatmap_chart.h"
#include "report/palette.h"
#include "report/svg_canvas.h"
#include "report/svg_text.h"

namespace difftx::report {
namespace {

constexpr double kLabelWidth = 170, kShareWidth = 150, kStripHeight = 30, kRowGap = 10;
constexpr double kZoomCellWidth = 40, kMinZoomCellWidth = 28, kZoomCellHeight = 26;
const char* kAnswerColour = "#D55E00";  // vermillion: stands out from the blue ramp

double largest_weight(const std::vector<AttentionRow>& rows) {
  double m = 0;
  for (const auto& r : rows)
    for (const double w : r.weights)
      if (std::isfinite(w)) m = std::max(m, w);
  return m > 0 ? m : 1;
}

std::string weight_colour(double w, double top) { return std::isfinite(w) ? blues(w / top) : kMissingColour; }

// The model's name, with the layer/head/query detail below it when `detailed`.
void draw_row_label(SvgCanvas& svg, double y, double height, const AttentionRow& row, bool detailed) {
  const TextStyle name{.size = 13, .bold = true, .centre_vertically = !detailed, .css_class = "row-label"};
  svg.text(kFigureMargin, detailed ? y + height / 2 - 2 : y + height / 2, row.label, name);
  if (detailed) svg.text(kFigureMargin, y + height / 2 + 12, row.detail, {.size = 10, .fill = "#666666"});
}

// The whole-context strip of one row; cells merge when tokens outnumber pixels.
void draw_strip(SvgCanvas& svg, const Rect& strip, const AttentionRow& row, size_t longest, double top) {
  const size_t n = row.weights.size();
  const double per_token = strip.w / static_cast<double>(longest);
  const size_t tokens_per_cell = std::max<size_t>(1, static_cast<size_t>(std::ceil(1.0 / per_token)));
  svg.rect({strip.x, strip.y, per_token * static_cast<double>(n), strip.h}, {.fill = blues(0)});
  for (size_t begin = 0; begin < n; begin += tokens_per_cell) {
    const size_t end = std::min(n, begin + tokens_per_cell);
    double peak = std::numeric_limits<double>::quiet_NaN();
    for (size_t i = begin; i < end; ++i)
      if (std::isfinite(row.weights[i])) peak = std::isfinite(peak) ? std::max(peak, row.weights[i]) : row.weights[i];
    std::string tip = row.label + ", position " + std::to_string(begin);
    tip += end - begin == 1 ? ' ' : '-';
    tip += end - begin == 1 ? visible_token(row.tokens[begin], 24) : std::to_string(end - 1);
    tip += ": " + format_significant(peak, 3);
    svg.rect({strip.x + per_token * static_cast<double>(begin), strip.y, per_token * static_cast<double>(end - begin),
              strip.h},
             {.fill = weight_colour(peak, top), .css_class = "attention-cell"}, tip);
  }
  const double x0 = strip.x + per_token * static_cast<double>(row.answer_begin);
  const double w = std::max(3.0, per_token * static_cast<double>(row.answer_end - row.answer_begin));
  svg.rect({x0 - 1, strip.y - 2, w + 2, strip.h + 4},
           {.stroke = kAnswerColour, .stroke_width = 2, .css_class = "answer-span"});
}

bool same_prompt(const std::vector<AttentionRow>& rows) {
  for (const auto& r : rows)
    if (r.tokens != rows[0].tokens || r.answer_begin != rows[0].answer_begin || r.answer_end != rows[0].answer_end)
      return false;
  return true;
}

// Zoom on [begin, end): one row of cells per model, the tokens under the last row.
double draw_zoom(SvgCanvas& svg, double y, const std::vector<AttentionRow>& rows, size_t begin, size_t end,
                 double cell_width, double top) {
  draw_panel_title(svg, kFigureMargin, y + 14,
                   "Around the answer (outlined), tokens " + std::to_string(begin) + "-" + std::to_string(end - 1));
  y += 24;
  const double x0 = kFigureMargin + kLabelWidth;
  for (const auto& row : rows) {
    draw_row_label(svg, y, kZoomCellHeight, row, false);
    for (size_t i = begin; i < end; ++i) {
      const double w = row.weights[i];
      const Rect cell{x0 + cell_width * static_cast<double>(i - begin), y, cell_width, kZoomCellHeight};
      svg.rect(cell, {.fill = weight_colour(w, top), .stroke = "#ffffff", .stroke_width = 1, .css_class = "zoom-cell"},
               row.label + ", position " + std::to_string(i) + " " + visible_token(row.tokens[i], 24) + ": " +
                   format_significant(w, 3));
    }
    const size_t shown_end = std::min(row.answer_end, end);  // a long answer may run past the window
    const Rect answer{x0 + cell_width * static_cast<double>(row.answer_begin - begin), y,
                      cell_width * static_cast<double>(shown_end - row.answer_begin), kZoomCellHeight};
    svg.rect(answer, {.stroke = kAnswerColour, .stroke_width = 2.5});
    y += kZoomCellHeight + 4;
  }
  for (size_t i = begin; i < end; ++i) {  // token text, slanted so that long tokens fit
    const bool in_answer = i >= rows[0].answer_begin && i < rows[0].answer_end;
    const double x = x0 + cell_width * (static_cast<double>(i - begin) + 0.5);
    svg.text(x + 3, y + 6, visible_token(rows[0].tokens[i], 12),
             {.size = 11,
              .anchor = Anchor::end,
              .fill = in_answer ? kAnswerColour : "#333333",
              .bold = in_answer,
              .monospace = true,
              .rotate = -50,
              .css_class = "token"});
  }
  return y + 6 + 0.77 * estimated_text_width(std::string(12, 'x'), 11, true) + 10;
}

}  // namespace

double answer_share(const AttentionRow& row) {
  double total = 0, answer = 0;
  for (size_t i = 0; i < row.weights.size(); ++i) {
    if (!std::isfinite(row.weights[i])) continue;
    total += row.weights[i];
    if (i >= row.answer_begin && i < row.answer_end) answer += row.weights[i];
  }
  return total > 0 ? answer / total : std::numeric_limits<double>::quiet_NaN();
}

SvgCanvas attention_figure(const AttentionFigure& figure) {
  DIFFTX_CHECK(!figure.rows.empty(), "attention figure: no rows");
  size_t longest = 0;
  for (const auto& r : figure.rows) {
    DIFFTX_CHECK(r.tokens.size() == r.weights.size() && !r.tokens.empty(), "attention figure '", r.label,
                 "': ", r.tokens.size(), " tokens and ", r.weights.size(),
                 " weights (need the same number, at least 1)");
    DIFFTX_CHECK(r.answer_begin < r.answer_end && r.answer_end <= r.tokens.size(), "attention figure '", r.label,
                 "': answer span [", r.answer_begin, ", ", r.answer_end, ") is not inside ", r.tokens.size(),
                 " tokens");
    longest = std::max(longest, r.tokens.size());
  }
  const double top = largest_weight(figure.rows);
  SvgCanvas svg(figure.width, 100);
  const std::vector<LegendEntry> legend = {{"answer span", kAnswerColour, LegendMark::line}};
  double y = draw_figure_header(svg, figure.title, figure.subtitle, legend);

  draw_panel_title(svg, kFigureMargin, y + 14, "Whole context");
  svg.text(figure.width - kFigureMargin, y + 14, "share on the answer",
           {.size = 11, .anchor = Anchor::end, .fill = "#555555"});
  y += 24;
  const Rect strip_area{kFigureMargin + kLabelWidth, 0, figure.width - 2 * kFigureMargin - kLabelWidth - kShareWidth,
                        0};
  for (const auto& row : figure.rows) {
    draw_row_label(svg, y, kStripHeight, row, true);
    draw_strip(svg, {strip_area.x, y, strip_area.w, kStripHeight}, row, longest, top);
    const double share = answer_share(row);
    svg.text(figure.width - kFigureMargin, y + kStripHeight / 2,
             std::isfinite(share) ? format_fixed(100 * share, 1) + "%" : "n/a",
             {.size = 13, .anchor = Anchor::end, .bold = true, .centre_vertically = true, .css_class = "answer-share"});
    y += kStripHeight + kRowGap;
  }
  Scale positions{linear_ticks(0, static_cast<double>(longest), 8), strip_area.x, strip_area.right()};
  positions.ticks.hi = static_cast<double>(longest);  // the strip ends at the last token, not at a round tick
  for (const double p : positions.ticks.values) {
    if (p > static_cast<double>(longest)) continue;
    svg.line(positions(p), y - kRowGap + 2, positions(p), y - kRowGap + 6, {.stroke = "#888888"});
    svg.text(positions(p), y + 8, format_fixed(p, 0), {.size = 11, .anchor = Anchor::middle, .fill = "#444444"});
  }
  svg.text(strip_area.x + strip_area.w / 2, y + 26, "context position (token index)",
           {.size = 12, .anchor = Anchor::middle});
  y += 40;

  if (same_prompt(figure.rows)) {
    // As much context on each side as fits at kMinZoomCellWidth, up to zoom_context tokens.
    const auto& r0 = figure.rows[0];
    const auto fits = static_cast<size_t>(strip_area.w / kMinZoomCellWidth);
    const size_t span = r0.answer_end - r0.answer_begin;
    const size_t side = std::min(figure.zoom_context, fits > span ? (fits - span) / 2 : 0);
    const size_t begin = r0.answer_begin > side ? r0.answer_begin - side : 0;
    const size_t end = std::min({r0.tokens.size(), r0.answer_end + side, begin + std::max<size_t>(fits, 1)});
    const double cell_width = std::min(kZoomCellWidth, strip_area.w / static_cast<double>(end - begin));
    y = draw_zoom(svg, y + 8, figure.rows, begin, end, cell_width, top);
  } else {
    draw_note(svg, kFigureMargin, y + 12, "The models saw different prompts: no aligned zoom on the answer.",
              Anchor::start);
    y += 24;
  }
  const int decimals = std::max(2, 1 - static_cast<int>(std::floor(std::log10(top))));
  const ColourScale scale{
      .lo = 0, .hi = top, .colour = blues, .title = "normalised attention weight", .decimals = decimals};
  y += draw_colour_bar(svg, kFigureMargin + kLabelWidth, y + 6, 240, scale) + 6 + kFigureMargin;
  svg.set_height(y);
  return svg;
}

}  // namespace difftx::report
