// The chart writers draw one element per datum (counted by class), leave gaps for NaN and
// always produce well-formed SVG whose numbers are finite, whatever strings they are given.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "report/attention_chart.h"
#include "report/bar_chart.h"
#include "report/figure_layout.h"
#include "report/heatmap_chart.h"
#include "report/line_chart.h"
#include "report/palette.h"
#include "report/svg_canvas.h"
#include "report/svg_checks.h"
#include "support/testing.h"

namespace difftx::report {
namespace {

using testing::checked_svg;
using testing::count_class;
using testing::find_elements;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
const std::string kHostile = std::string("<script>alert(\"x\")</script> &amp; '\x01\xff\xef\xbf\xbe") + '\0' + "end";
const std::string kHostileShown =
    "<script>alert(\"x\")</script> &amp; '\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
    "end";

TEST(SvgCanvas, WritesEscapedWellFormedSvg) {
  SvgCanvas svg(200, 100);
  svg.rect({10, 10, 50, 20}, {.fill = "#0072B2", .css_class = "bar"}, kHostile);
  svg.text(5, 50, kHostile, {.css_class = "label"});
  svg.begin_clip({0, 0, 100, 100});
  svg.polyline({{0, 0}, {10, 5.556}, {20, 1}}, {.stroke = "#000000", .css_class = "series"});
  svg.end_clip();
  svg.set_height(120);
  const std::string doc = svg.finish();
  const auto root = checked_svg(doc);
  EXPECT_EQ(root.attribute("height"), "120");
  ASSERT_EQ(count_class(root, "bar"), 1u);
  EXPECT_EQ(find_elements(root, "title")[0]->text, kHostileShown);
  EXPECT_EQ(find_elements(root, "", "label")[0]->text, kHostileShown);
  EXPECT_EQ(find_elements(root, "", "series")[0]->attribute("points"), "0,0 10,5.56 20,1");
  EXPECT_EQ(doc.find("<script"), std::string::npos);
}

TEST(SvgCanvas, RejectsNonFiniteGeometryAndUnbalancedClips) {
  SvgCanvas svg(10, 10);
  EXPECT_THROW(svg.rect({kNan, 0, 1, 1}, {}), Error);
  EXPECT_THROW(svg.line(0, 0, std::numeric_limits<double>::infinity(), 1, {}), Error);
  EXPECT_THROW(svg.polyline({{0, 0}, {1, kNan}}, {}), Error);
  EXPECT_THROW(svg.rect({0, 0, -1, 1}, {}), Error);
  EXPECT_THROW(svg.end_clip(), Error);
  svg.begin_clip({0, 0, 1, 1});
  EXPECT_THROW(svg.finish(), Error);
  EXPECT_THROW(SvgCanvas(0, 10), Error);
}

TEST(LineChart, OneMarkerPerFinitePointAndGapsAtNan) {
  LinePanel panel{.title = kHostile, .axes = {"tokens", "loss"}};
  panel.series.push_back({.name = "a",
                          .colour = category_colour(0),
                          .points = {{0, 5}, {1, 4}, {2, kNan}, {3, 3}, {4, 2.5}},
                          .markers = true});
  panel.series.push_back({.name = kHostile,
                          .colour = category_colour(1),
                          .points = {{0, 6}, {1, kNan}, {2, 4}, {3, kNan}, {4, 3}},
                          .markers = true});
  panel.series.push_back({.name = "c", .colour = category_colour(2), .points = {{0, 7}, {1, kNan}, {2, 4.5}, {3, 4}}});
  SvgCanvas svg(500, 300);
  draw_line_panel(svg, {0, 0, 500, 300}, panel);
  const auto root = checked_svg(svg.finish());
  EXPECT_EQ(count_class(root, "marker"), 4u + 3u);
  // a: two runs; b: three single points (markers only); c: one single point (a dot) and one run
  EXPECT_EQ(count_class(root, "series", "polyline"), 2u + 0u + 1u);
  EXPECT_EQ(count_class(root, "panel-title"), 1u);
  EXPECT_EQ(find_elements(root, "", "panel-title")[0]->text, kHostileShown);
}

TEST(LineChart, CategoricalAxisAndNoData) {
  LinePanel panel{.title = "q", .axes = {"bits", "loss"}, .x_categories = {"fp32", "16", "8", "6", "4"}};
  panel.series.push_back(
      {.name = "m", .colour = "#000000", .points = {{0, 4}, {1, 4}, {2, 4.1}, {3, kNan}, {4, 6}}, .markers = true});
  SvgCanvas svg(500, 300);
  draw_line_panel(svg, {0, 0, 500, 300}, panel);
  const auto root = checked_svg(svg.finish());
  EXPECT_EQ(count_class(root, "marker"), 4u);
  std::vector<std::string> texts;
  for (const auto* t : find_elements(root, "text")) texts.push_back(t->text);
  for (const char* label : {"fp32", "16", "8", "6", "4"})
    EXPECT_NE(std::find(texts.begin(), texts.end(), label), texts.end()) << label;

  LinePanel empty{.title = "nothing", .axes = {"x", "y"}};
  empty.series.push_back({.name = "m", .colour = "#000000", .points = {{0, kNan}, {1, kNan}}});
  SvgCanvas svg2(500, 300);
  draw_line_panel(svg2, {0, 0, 500, 300}, empty);
  const auto root2 = checked_svg(svg2.finish());
  EXPECT_EQ(count_class(root2, "series"), 0u);
  ASSERT_EQ(count_class(root2, "note"), 1u);
  EXPECT_EQ(find_elements(root2, "", "note")[0]->text, "no data");
}

TEST(LineChart, ClipsEarlyOutliersWithANote) {
  LinePanel panel{.title = "loss", .axes = {"tokens", "loss"}, .y_fit_from = 0.1};
  Series s{.name = "m", .colour = "#000000"};
  for (int i = 0; i <= 100; ++i) s.points.emplace_back(i, i == 0 ? 9.0 : 4 + 1.0 / i);
  panel.series.push_back(s);
  SvgCanvas svg(500, 300);
  draw_line_panel(svg, {0, 0, 500, 300}, panel);
  const auto root = checked_svg(svg.finish());
  ASSERT_EQ(count_class(root, "note"), 1u);
  EXPECT_NE(find_elements(root, "", "note")[0]->text.find("cut off"), std::string::npos);
  // The y axis was fitted to the later points: no tick reaches 9.
  for (const auto* t : find_elements(root, "text")) EXPECT_NE(t->text, "9.0");
}

BarPanel outlier_panel(std::vector<std::vector<double>> values) {
  return BarPanel{.title = "|hidden states|",
                  .axes = {"", "magnitude"},
                  .groups = {"top-1", "top-2", "top-3", "median"},
                  .series_names = {"baseline", "diff", kHostile},
                  .series_colours = {category_colour(0), category_colour(1), category_colour(2)},
                  .values = std::move(values)};
}

TEST(BarChart, OneBarPerFiniteValueAndLogScaleForWideRanges) {
  const BarPanel wide = outlier_panel({{1728, 631, 884}, {950, 347, 486}, {864, kNan, 442}, {1.2, 1.0, 1.05}});
  EXPECT_TRUE(bar_panel_uses_log(wide));
  SvgCanvas svg(600, 320);
  draw_bar_panel(svg, {0, 0, 600, 320}, wide);
  const auto root = checked_svg(svg.finish());
  EXPECT_EQ(count_class(root, "bar"), 11u);
  EXPECT_EQ(count_class(root, "bar-label"), 11u);
  EXPECT_EQ(count_class(root, "bar-missing"), 1u);
  std::vector<std::string> texts;
  for (const auto* t : find_elements(root, "text")) texts.push_back(t->text);
  EXPECT_NE(std::find(texts.begin(), texts.end(), "magnitude (log scale)"), texts.end());
  EXPECT_NE(std::find(texts.begin(), texts.end(), "1728"), texts.end());
  // Taller bar, larger value: heights grow with the values on a log axis too.
  const auto bars = find_elements(root, "", "bar");
  EXPECT_GT(std::stod(bars[0]->attribute("height")), std::stod(bars[1]->attribute("height")));

  const BarPanel narrow =
      outlier_panel({{44.8, 19.6, 25.4}, {35.8, 15.7, 20.3}, {33.6, 14.7, 19.1}, {3.7, 1.55, 2.05}});
  EXPECT_FALSE(bar_panel_uses_log(narrow));                                                         // 44.8 / 1.55 < 30
  EXPECT_FALSE(bar_panel_uses_log(outlier_panel({{100, 0, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}})));  // 0 on a log axis
  BarPanel never = wide;
  never.log_when_ratio_above = 0;
  EXPECT_FALSE(bar_panel_uses_log(never));
  BarPanel bad = wide;
  bad.values.pop_back();
  SvgCanvas svg2(600, 320);
  EXPECT_THROW(draw_bar_panel(svg2, {0, 0, 600, 320}, bad), Error);
}

TEST(Heatmap, OneCellPerValueWithLabelsAndMissingCells) {
  HeatmapPanel p{.title = "diff",
                 .row_labels = {"256 tokens, N=1 R=1", kHostile},
                 .column_labels = {"0%", "50%", "100%"},
                 .column_title = "depth",
                 .values = {{0.8, 0.654, kNan}, {1.0, 0.0, 0.25}}};
  const ColourScale scale{.lo = 0, .hi = 1, .colour = viridis, .title = "accuracy", .decimals = 2};
  SvgCanvas svg(600, 300);
  draw_heatmap_panel(svg, 0, 0, p, scale, HeatmapGeometry{});
  draw_colour_bar(svg, 10, 200, 200, scale);
  const auto root = checked_svg(svg.finish());
  ASSERT_EQ(count_class(root, "cell"), 6u);
  const auto labels = find_elements(root, "", "cell-label");
  ASSERT_EQ(labels.size(), 6u);
  EXPECT_EQ(labels[0]->text, "0.80");
  EXPECT_EQ(labels[1]->text, "0.65");
  EXPECT_EQ(labels[2]->text, "n/a");
  const auto cells = find_elements(root, "", "cell");
  EXPECT_EQ(cells[2]->attribute("fill"), kMissingColour);
  EXPECT_EQ(cells[3]->attribute("fill"), viridis(1));
  EXPECT_EQ(cells[4]->attribute("fill"), viridis(0));

  HeatmapPanel ragged = p;
  ragged.values[1].pop_back();
  EXPECT_THROW(draw_heatmap_panel(svg, 0, 0, ragged, scale, HeatmapGeometry{}), Error);
}

TEST(Palette, DistinctCategoriesAndRampEnds) {
  EXPECT_EQ(category_colour(0), "#0072B2");
  EXPECT_NE(category_colour(0), category_colour(1));
  EXPECT_EQ(category_colour(8), category_colour(0));
  EXPECT_EQ(viridis(0), "#440154");
  EXPECT_EQ(viridis(1), "#fde725");
  EXPECT_EQ(viridis(2), viridis(1));  // clamped
  EXPECT_EQ(viridis(kNan), viridis(0));
  EXPECT_EQ(text_colour_on(viridis(0)), "#ffffff");
  EXPECT_EQ(text_colour_on(viridis(1)), "#222222");
}

AttentionRow attention_row(const std::string& label, size_t n, size_t begin, size_t end) {
  AttentionRow r{.label = label,
                 .detail = "layer 1, head 0, query at " + std::to_string(n - 1),
                 .answer_begin = begin,
                 .answer_end = end};
  for (size_t i = 0; i < n; ++i) {
    r.tokens.push_back(i % 7 == 3 ? kHostile : " tok" + std::to_string(i));
    r.weights.push_back(i >= begin && i < end ? 0.2 : 0.6 / static_cast<double>(n));
  }
  return r;
}

TEST(AttentionFigure, CellPerTokenAnswerOutlinedAndZoomedTokens) {
  AttentionFigure f{.title = "one prompt", .subtitle = kHostile};
  for (const char* name : {"baseline", "diff", "diff2"}) f.rows.push_back(attention_row(name, 300, 152, 154));
  f.rows[1].weights[10] = kNan;
  const auto root = checked_svg(attention_figure(f).finish());
  EXPECT_EQ(count_class(root, "attention-cell"), 3u * 300u);
  EXPECT_EQ(count_class(root, "answer-span"), 3u);
  EXPECT_EQ(count_class(root, "answer-share"), 3u);
  EXPECT_EQ(count_class(root, "row-label"), 6u);  // strips and zoom
  // Zoom: the answer and as much context on each side as fits, a cell per row and token, the
  // token text once.
  const auto tokens = find_elements(root, "", "token");
  EXPECT_GE(tokens.size(), 2u + 2u * 6u);
  EXPECT_LE(tokens.size(), 2u + 2u * f.zoom_context);
  EXPECT_EQ(count_class(root, "zoom-cell"), 3u * tokens.size());
  std::vector<std::string> texts;
  for (const auto* t : tokens) texts.push_back(t->text);
  EXPECT_NE(std::find(texts.begin(), texts.end(), "\xc2\xb7tok152"), texts.end());
  EXPECT_NE(std::find(texts.begin(), texts.end(), "\xc2\xb7tok153"), texts.end());
  EXPECT_NEAR(answer_share(f.rows[0]), 0.4 / (0.4 + 0.6 * 298 / 300), 1e-12);
}

TEST(AttentionFigure, LongContextsMergeCellsAndDifferentPromptsSkipTheZoom) {
  AttentionFigure f{.title = "long"};
  f.rows.push_back(attention_row("baseline", 5000, 4000, 4003));
  f.rows.push_back(attention_row("diff", 4000, 100, 101));
  const auto root = checked_svg(attention_figure(f).finish());
  const size_t cells = count_class(root, "attention-cell");
  EXPECT_LT(cells, 2u * 1000u);  // no more cells than the strips have pixels
  EXPECT_GT(cells, 2u * 300u);
  EXPECT_EQ(count_class(root, "zoom-cell"), 0u);
  ASSERT_EQ(count_class(root, "note"), 1u);

  AttentionFigure bad{.title = "bad"};
  bad.rows.push_back(attention_row("m", 10, 8, 12));
  EXPECT_NE(testing::error_of([&] { attention_figure(bad); }).find("answer span [8, 12)"), std::string::npos);
  bad.rows[0] = attention_row("m", 10, 2, 3);
  bad.rows[0].weights.pop_back();
  EXPECT_NE(testing::error_of([&] { attention_figure(bad); }).find("10 tokens and 9 weights"), std::string::npos);
}

}  // namespace
}  // namespace difftx::report
