// A minimal SVG 1.1 writer: shapes and text appended in drawing order, every string escaped
// (svg_text.h) and every coordinate checked finite, so the document is always well-formed.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace difftx::report {

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
};

// How a shape is painted. Empty colours mean "none". css_class marks what a shape stands for
// (a bar, a cell, a series) so that readers and tests can find the data in the drawing.
struct ShapeStyle {
  std::string fill{};
  std::string stroke{};
  double stroke_width = 1;
  double opacity = 1;  // of the whole shape
  std::string css_class{};
};

enum class Anchor { start, middle, end };

struct TextStyle {
  double size = 12;
  Anchor anchor = Anchor::start;
  std::string fill = "#222222";
  bool bold = false;
  bool monospace = false;
  bool centre_vertically = false;  // y is the middle of the text instead of its baseline
  double rotate = 0;               // degrees, clockwise, about (x, y)
  std::string css_class{};
};

using Points = std::vector<std::pair<double, double>>;

class SvgCanvas {
 public:
  SvgCanvas(double width, double height);

  // `tooltip` becomes a <title> child, which viewers show on hover.
  void rect(const Rect& r, const ShapeStyle& style, std::string_view tooltip = {});
  void line(double x1, double y1, double x2, double y2, const ShapeStyle& style);
  void polyline(const Points& points, const ShapeStyle& style);
  void circle(double cx, double cy, double r, const ShapeStyle& style, std::string_view tooltip = {});
  void text(double x, double y, std::string_view text, const TextStyle& style);

  // Shapes drawn between these two are clipped to `area`.
  void begin_clip(const Rect& area);
  void end_clip();

  double width() const { return width_; }
  double height() const { return height_; }
  // Figures lay out top to bottom and learn their height last.
  void set_height(double height);
  // The whole document: XML declaration, <svg> root with a white background, the shapes.
  std::string finish() const;

 private:
  void open_shape(std::string_view element, const ShapeStyle& style);
  void close_shape(std::string_view element, std::string_view tooltip);

  double width_, height_;
  std::string body_{};
  int clips_ = 0;
  int open_clips_ = 0;
};

// Estimated width of `text` in DejaVu Sans (the font the report asks for, in Debian's
// fonts-dejavu-core) at `size` px, for layout: no font metrics are at hand.
double estimated_text_width(std::string_view text, double size, bool monospace = false);

}  // namespace difftx::report
