// The test-side XML checker must reject what is not well-formed, or the SVG tests prove nothing.
#include <gtest/gtest.h>

#include <string>

#include "support/xml_check.h"

namespace difftx::testing {
namespace {

TEST(XmlCheck, ReadsElementsAttributesAndDecodedText) {
  const XmlElement root = parse_xml(
      "<?xml version=\"1.0\"?>\n<!-- c --><svg a=\"1 &amp; 2\" b='&lt;x&gt;'><g><text>caf\xc3\xa9 &#233;&#x1F600;"
      "&quot;&apos;</text><rect/></g></svg>\n");
  EXPECT_EQ(root.name, "svg");
  EXPECT_EQ(root.attribute("a"), "1 & 2");
  EXPECT_EQ(root.attribute("b"), "<x>");
  ASSERT_EQ(root.children.size(), 1u);
  EXPECT_EQ(find_elements(root, "text")[0]->text, "caf\xc3\xa9 \xc3\xa9\xf0\x9f\x98\x80\"'");
  EXPECT_EQ(find_elements(root).size(), 4u);
  EXPECT_EQ(find_elements(root, "rect").size(), 1u);
}

TEST(XmlCheck, RejectsWhatIsNotWellFormed) {
  const char* bad[] = {
      "<a><b></a></b>",
      "<a>",
      "<a></b>",
      "<a x=1></a>",
      "<a x=\"1\" x=\"2\"/>",
      "<a>&</a>",
      "<a>&nbsp;</a>",
      "<a>x < y</a>",
      "<a x=\"<\"/>",
      "<a>\x01</a>",
      "<a>\xff</a>",
      "<a>\xef\xbf\xbe</a>",
      "<a>&#0;</a>",
      "<a>&#xD800;</a>",
      "<a/><b/>",
      "",
      "text",
      "<a x=\"1\"y=\"2\"/>",
      "<a><!-- x </a>",
      "<1a/>",
  };
  for (const char* doc : bad) EXPECT_THROW(parse_xml(doc), XmlError) << doc;
}

}  // namespace
}  // namespace difftx::testing
