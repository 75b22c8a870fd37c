// Checks shared by the report tests: an SVG document is well-formed XML with an <svg> root
// and every geometric attribute a finite number (no "nan", "inf" or empty values).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "support/xml_check.h"

namespace difftx::testing {

inline bool is_finite_number(const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return std::isfinite(v) && (*end == '\0' || (*end == '%' && end[1] == '\0'));
}

inline void expect_numbers_finite(const XmlElement& e) {
  static const std::set<std::string> kNumeric = {"x",  "y",  "width", "height", "x1",        "y1",           "x2",
                                                 "y2", "cx", "cy",    "r",      "font-size", "stroke-width", "opacity"};
  for (const auto& [key, value] : e.attributes) {
    if (kNumeric.count(key)) {
      EXPECT_TRUE(is_finite_number(value)) << "<" << e.name << " " << key << "=\"" << value << "\">";
    }
    if (key == "points") {
      std::istringstream in(value);
      std::string pair;
      int n = 0;
      while (in >> pair) {
        const auto comma = pair.find(',');
        ASSERT_NE(comma, std::string::npos) << value;
        EXPECT_TRUE(is_finite_number(pair.substr(0, comma)) && is_finite_number(pair.substr(comma + 1))) << pair;
        ++n;
      }
      EXPECT_GE(n, 2) << "a polyline needs two points: " << value;
    }
  }
  for (const auto& c : e.children) expect_numbers_finite(c);
}

// Parses `svg` (failing the test if it is not well-formed) and returns its root.
inline XmlElement checked_svg(const std::string& svg) {
  XmlElement root;
  try {
    root = parse_xml(svg);
  } catch (const XmlError& e) {
    ADD_FAILURE() << e.what() << "\n" << svg.substr(0, 2000);
    return root;
  }
  EXPECT_EQ(root.name, "svg");
  EXPECT_EQ(root.attribute("xmlns"), "http://www.w3.org/2000/svg");
  EXPECT_TRUE(is_finite_number(root.attribute("width")) && is_finite_number(root.attribute("height")));
  expect_numbers_finite(root);
  return root;
}

inline size_t count_class(const XmlElement& root, const std::string& css_class, const std::string& name = "") {
  return find_elements(root, name, css_class).size();
}

}  // namespace difftx::testing
