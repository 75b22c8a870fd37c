#include "report/svg_canvas.h"

#include "core/error.h"
#include "report/svg_text.h"

namespace difftx::report {
namespace {

const char* kSansFonts = "'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif";
const char* kMonoFonts = "'DejaVu Sans Mono', Menlo, Consolas, monospace";

// ` name="value"`, built by appending (GCC 12 misreads chains of operator+ here: -Wrestrict).
std::string quoted_attribute(std::string_view name, const std::string& value) {
  std::string out;
  out.reserve(name.size() + value.size() + 4);
  out += ' ';
  out += name;
  out += "=\"";
  out += value;
  out += '"';
  return out;
}

std::string attribute(std::string_view name, std::string_view value) {
  return quoted_attribute(name, xml_escape(value));
}

std::string number_attribute(std::string_view name, double value) { return quoted_attribute(name, svg_number(value)); }

}  // namespace

SvgCanvas::SvgCanvas(double width, double height) : width_(width), height_(height) {
  DIFFTX_CHECK(width > 0 && height > 0, "svg: size must be positive, got ", width, " x ", height);
}

void SvgCanvas::set_height(double height) {
  DIFFTX_CHECK(height > 0, "svg: height must be positive, got ", height);
  height_ = height;
}

void SvgCanvas::open_shape(std::string_view element, const ShapeStyle& style) {
  body_ += '<';
  body_ += element;
  if (!style.css_class.empty()) body_ += attribute("class", style.css_class);
  body_ += attribute("fill", style.fill.empty() ? "none" : style.fill);
  if (!style.stroke.empty()) {
    body_ += attribute("stroke", style.stroke) + number_attribute("stroke-width", style.stroke_width);
  }
  if (style.opacity < 1) body_ += number_attribute("opacity", style.opacity);
}

void SvgCanvas::close_shape(std::string_view element, std::string_view tooltip) {
  if (tooltip.empty()) {
    body_ += "/>\n";
  } else {
    body_ += "><title>" + xml_escape(tooltip) + "</title></" + std::string(element) + ">\n";
  }
}

void SvgCanvas::rect(const Rect& r, const ShapeStyle& style, std::string_view tooltip) {
  DIFFTX_CHECK(r.w >= 0 && r.h >= 0, "svg: rectangle of negative size ", r.w, " x ", r.h);
  open_shape("rect", style);
  body_ += number_attribute("x", r.x) + number_attribute("y", r.y) + number_attribute("width", r.w) +
           number_attribute("height", r.h);
  close_shape("rect", tooltip);
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, const ShapeStyle& style) {
  open_shape("line", style);
  body_ +=
      number_attribute("x1", x1) + number_attribute("y1", y1) + number_attribute("x2", x2) + number_attribute("y2", y2);
  close_shape("line", {});
}

void SvgCanvas::polyline(const Points& points, const ShapeStyle& style) {
  open_shape("polyline", style);
  std::string list;
  for (const auto& [x, y] : points) {
    if (!list.empty()) list += ' ';
    list += svg_number(x);
    list += ',';
    list += svg_number(y);
  }
  body_ += " points=\"" + list + "\" stroke-linejoin=\"round\" stroke-linecap=\"round\"";
  close_shape("polyline", {});
}

void SvgCanvas::circle(double cx, double cy, double r, const ShapeStyle& style, std::string_view tooltip) {
  open_shape("circle", style);
  body_ += number_attribute("cx", cx) + number_attribute("cy", cy) + number_attribute("r", r);
  close_shape("circle", tooltip);
}

void SvgCanvas::text(double x, double y, std::string_view content, const TextStyle& style) {
  body_ += "<text";
  if (!style.css_class.empty()) body_ += attribute("class", style.css_class);
  body_ += number_attribute("x", x) + number_attribute("y", y) + number_attribute("font-size", style.size);
  body_ += attribute("fill", style.fill);
  if (style.monospace) body_ += attribute("font-family", kMonoFonts);
  if (style.bold) body_ += " font-weight=\"bold\"";
  if (style.anchor != Anchor::start)
    body_ += attribute("text-anchor", style.anchor == Anchor::middle ? "middle" : "end");
  if (style.centre_vertically) body_ += " dominant-baseline=\"central\"";
  if (style.rotate != 0)
    body_ += " transform=\"rotate(" + svg_number(style.rotate) + " " + svg_number(x) + " " + svg_number(y) + ")\"";
  body_ += " xml:space=\"preserve\">" + xml_escape(content) + "</text>\n";
}

void SvgCanvas::begin_clip(const Rect& area) {
  const std::string id = "clip" + std::to_string(clips_++);
  body_ += "<clipPath id=\"" + id + "\"><rect" + number_attribute("x", area.x) + number_attribute("y", area.y) +
           number_attribute("width", area.w) + number_attribute("height", area.h) + "/></clipPath>\n";
  body_ += "<g clip-path=\"url(#" + id + ")\">\n";
  ++open_clips_;
}

void SvgCanvas::end_clip() {
  DIFFTX_CHECK(open_clips_ > 0, "svg: end_clip without begin_clip");
  body_ += "</g>\n";
  --open_clips_;
}

std::string SvgCanvas::finish() const {
  DIFFTX_CHECK(open_clips_ == 0, "svg: ", open_clips_, " clip group(s) left open");
  const std::string w = svg_number(width_), h = svg_number(height_);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
         w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h + "\"" + attribute("font-family", kSansFonts) +
         ">\n" + "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" + body_ + "</svg>\n";
}

double estimated_text_width(std::string_view text, double size, bool monospace) {
  // Count code points (UTF-8 lead bytes); DejaVu Sans averages about 0.58 em per character,
  // DejaVu Sans Mono is exactly 0.602 em.
  double chars = 0;
  for (const char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return chars * size * (monospace ? 0.602 : 0.58);
}

}  // namespace difftx::report
