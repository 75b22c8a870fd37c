#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/rng.h"
#include "data/utf8.h"
#include "report/svg_text.h"
#include "support/xml_check.h"

namespace difftx::report {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(XmlEscape, EscapesMarkupAndQuotes) {
  EXPECT_EQ(xml_escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
  EXPECT_EQ(xml_escape("&amp;"), "&amp;amp;");  // already escaped text is text too
  EXPECT_EQ(xml_escape(""), "");
  EXPECT_EQ(xml_escape("caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80 " + kFffd),
            "caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80 " + kFffd);
  EXPECT_EQ(xml_escape("a\tb\nc\rd"), "a\tb\nc\rd");
}

TEST(XmlEscape, ReplacesInvalidUtf8AndForbiddenCharacters) {
  EXPECT_EQ(xml_escape("a\xff"
                       "b"),
            "a" + kFffd + "b");
  EXPECT_EQ(xml_escape("\xe2\x82"), kFffd + kFffd);              // truncated sequence
  EXPECT_EQ(xml_escape("\xc0\xaf"), kFffd + kFffd);              // overlong '/'
  EXPECT_EQ(xml_escape("\xed\xa0\x80"), kFffd + kFffd + kFffd);  // UTF-16 surrogate
  EXPECT_EQ(xml_escape(std::string("x\0y", 3)), "x" + kFffd + "y");
  EXPECT_EQ(xml_escape("\x01\x1b\x7f"), kFffd + kFffd + "\x7f");     // DEL is allowed in XML 1.0
  EXPECT_EQ(xml_escape("\xef\xbf\xbe\xef\xbf\xbf"), kFffd + kFffd);  // U+FFFE, U+FFFF
}

// Whatever the bytes, the escaped text is well-formed XML in text and in attributes, and reads
// back as the input wherever the input was valid XML text.
TEST(XmlEscape, AnyBytesMakeWellFormedXml) {
  Rng rng(7);
  const std::string alphabet[] = {"<",
                                  ">",
                                  "&",
                                  "\"",
                                  "'",
                                  "a",
                                  " ",
                                  "\n",
                                  "\x01",
                                  "\x00",
                                  "\xff",
                                  "\xc3",
                                  "\xa9",
                                  "\xe2\x82\xac",
                                  "\xef\xbf\xbe",
                                  "\xed\xa0\x80",
                                  "\xf0\x9f\x98\x80",
                                  "&amp;",
                                  "]]>"};
  for (int trial = 0; trial < 3000; ++trial) {
    std::string input;
    const int n = static_cast<int>(rng.next_u64() % 24);
    for (int k = 0; k < n; ++k) {
      const auto& piece = alphabet[rng.next_u64() % std::size(alphabet)];
      input += piece.empty() ? std::string(1, '\0') : piece;
    }
    const std::string escaped = xml_escape(input);
    testing::XmlElement e;
    ASSERT_NO_THROW(e = testing::parse_xml("<t a=\"" + escaped + "\" b='" + escaped + "'>" + escaped + "</t>"))
        << "input bytes: " << input;
    EXPECT_EQ(e.text, e.attribute("a"));
    EXPECT_EQ(e.text, e.attribute("b"));
    EXPECT_EQ(data::valid_utf8_prefix(e.text), e.text.size());
    const bool clean = data::valid_utf8_prefix(input) == input.size() && input.find('\x01') == std::string::npos &&
                       input.find('\0') == std::string::npos && input.find("\xef\xbf\xbe") == std::string::npos;
    if (clean) {
      EXPECT_EQ(e.text, input);
    }
  }
}

TEST(VisibleToken, ShowsWhitespaceAndControlsAndCuts) {
  EXPECT_EQ(visible_token(" magic"), "\xc2\xb7magic");
  EXPECT_EQ(visible_token("\n"), "\xe2\x86\xb5");
  EXPECT_EQ(visible_token("\t"), "\xe2\x87\xa5");
  EXPECT_EQ(visible_token(std::string("\0\x07", 2)), "\xe2\x90\x80\xe2\x90\x87");  // U+2400, U+2407
  EXPECT_EQ(visible_token("\x7f"), "\xe2\x90\xa1");
  EXPECT_EQ(visible_token(""), "\xe2\x88\x85");
  EXPECT_EQ(visible_token("\xff"
                          "a"),
            kFffd + "a");
  EXPECT_EQ(visible_token("abcdefghijkl"), "abcdefghijkl");  // 12 characters: kept
  EXPECT_EQ(visible_token("abcdefghijklm"), "abcdefghijk\xe2\x80\xa6");
  EXPECT_EQ(visible_token("\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2\xe5\xad\x97", 3),
            "\xe6\xbc\xa2\xe5\xad\x97\xe2\x80\xa6");
  EXPECT_EQ(visible_token("<b>", 12), "<b>");  // shown as is; escaping is the writer's job
}

TEST(SvgNumber, AtMostTwoDecimalsAndNeverNanOrInfinity) {
  EXPECT_EQ(svg_number(1.234), "1.23");
  EXPECT_EQ(svg_number(1.0), "1");
  EXPECT_EQ(svg_number(0.1 + 0.2), "0.3");
  EXPECT_EQ(svg_number(-0.001), "0");
  EXPECT_EQ(svg_number(-2.5), "-2.5");
  EXPECT_EQ(svg_number(12345.678), "12345.68");
  EXPECT_EQ(svg_number(100), "100");
  EXPECT_THROW(svg_number(kNaN), Error);
  EXPECT_THROW(svg_number(kInf), Error);
  EXPECT_THROW(svg_number(-kInf), Error);
}

TEST(FormatNumbers, ForReaders) {
  EXPECT_EQ(format_fixed(4.3049, 3), "4.305");
  EXPECT_EQ(format_fixed(-0.0001, 2), "0.00");
  EXPECT_EQ(format_fixed(kNaN, 2), "n/a");
  EXPECT_EQ(format_fixed(kInf, 2), "n/a");
  EXPECT_EQ(format_significant(38.8), "38.8");
  EXPECT_EQ(format_significant(1688.2), "1688");
  EXPECT_EQ(format_significant(0.00123), "0.00123");
  EXPECT_EQ(format_significant(0), "0");
  EXPECT_EQ(format_significant(1e7), "1.00e+07");
  EXPECT_EQ(format_significant(1.5e-5), "1.50e-05");
  EXPECT_EQ(format_significant(-kInf), "n/a");
  EXPECT_EQ(format_count(10130000), "10.1M");
  EXPECT_EQ(format_count(2e6), "2M");
  EXPECT_EQ(format_count(2048), "2.05k");
  EXPECT_EQ(format_count(65536), "65.5k");
  EXPECT_EQ(format_count(512), "512");
  EXPECT_EQ(format_count(1.5e9), "1.5G");
  EXPECT_EQ(format_count(kNaN), "n/a");
  EXPECT_EQ(format_grouped(2000000), "2,000,000");
  EXPECT_EQ(format_grouped(2461.6), "2,462");
  EXPECT_EQ(format_grouped(999), "999");
  EXPECT_EQ(format_grouped(1000), "1,000");
  EXPECT_EQ(format_grouped(-1234.6), "-1,235");
  EXPECT_EQ(format_grouped(0), "0");
  EXPECT_EQ(format_grouped(kNaN), "n/a");
}

}  // namespace
}  // namespace difftx::report
