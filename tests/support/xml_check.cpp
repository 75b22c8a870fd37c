#include "support/xml_check.h"

#include <cstdint>

#include "data/utf8.h"

namespace difftx::testing {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {
    if (data::valid_utf8_prefix(s_) != s_.size())
      fail("invalid UTF-8 at byte " + std::to_string(data::valid_utf8_prefix(s_)));
  }

  XmlElement document() {
    if (starts("<?xml")) {
      const size_t end = s_.find("?>", i_);
      if (end == std::string_view::npos) fail("unterminated XML declaration");
      i_ = end + 2;
    }
    misc();
    if (!starts("<")) fail("expected the root element");
    XmlElement root = element();
    misc();
    if (i_ != s_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw XmlError("XML error at byte " + std::to_string(i_) + ": " + what);
  }
  bool starts(std::string_view p) const { return s_.substr(i_, p.size()) == p; }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  void comment() {
    const size_t end = s_.find("-->", i_ + 4);
    if (end == std::string_view::npos) fail("unterminated comment");
    i_ = end + 3;
  }
  void misc() {
    for (;;) {
      skip_space();
      if (starts("<!--")) comment();
      else return;
    }
  }
  static bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
  std::string name() {
    const size_t start = i_;
    if (i_ >= s_.size() || !name_start(s_[i_])) fail("expected a name");
    while (i_ < s_.size() && (name_start(s_[i_]) || (s_[i_] >= '0' && s_[i_] <= '9') || s_[i_] == '-' || s_[i_] == '.'))
      ++i_;
    return std::string(s_.substr(start, i_ - start));
  }
  // One character of text or of an attribute value, appended decoded; checks XML's Char rule.
  void character(std::string& out) {
    const auto c = static_cast<unsigned char>(s_[i_]);
    if (c == '&') {
      const size_t end = s_.find(';', i_);
      if (end == std::string_view::npos || end - i_ > 12) fail("unterminated entity reference");
      const std::string_view ref = s_.substr(i_ + 1, end - i_ - 1);
      if (ref == "lt") out += '<';
      else if (ref == "gt") out += '>';
      else if (ref == "amp") out += '&';
      else if (ref == "quot") out += '"';
      else if (ref == "apos") out += '\'';
      else if (ref.size() > 1 && ref[0] == '#') code_point_reference(ref, out);
      else fail("unknown entity &" + std::string(ref) + ";");
      i_ = end + 1;
      return;
    }
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') fail("control character " + std::to_string(c));
    if (c == 0xEF && i_ + 2 < s_.size() && static_cast<unsigned char>(s_[i_ + 1]) == 0xBF &&
        static_cast<unsigned char>(s_[i_ + 2]) >= 0xBE)
      fail("U+FFFE or U+FFFF");
    out += s_[i_++];
  }
  void code_point_reference(std::string_view ref, std::string& out) {
    const bool hex = ref.size() > 2 && ref[1] == 'x';
    uint32_t cp = 0;
    for (const char d : ref.substr(hex ? 2 : 1)) {
      const int v = d >= '0' && d <= '9'          ? d - '0'
                    : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
                    : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10
                                                  : -1;
      if (v < 0 || cp > 0x10FFFF) fail("bad character reference &" + std::string(ref) + ";");
      cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(v);
    }
    const bool allowed = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
    if (!allowed) fail("character reference to a forbidden character &" + std::string(ref) + ";");
    data::append_utf8(cp, out);
  }
  XmlElement element() {
    ++i_;  // '<'
    XmlElement e;
    e.name = name();
    for (;;) {
      const size_t before = i_;
      skip_space();
      if (starts("/>")) {
        i_ += 2;
        return e;
      }
      if (starts(">")) {
        ++i_;
        break;
      }
      if (i_ == before) fail("expected whitespace before an attribute of <" + e.name + ">");
      const std::string key = name();
      skip_space();
      if (!starts("=")) fail("attribute " + key + " has no value");
      ++i_;
      skip_space();
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) fail("attribute " + key + " is not quoted");
      const char quote = s_[i_++];
      std::string value;
      while (i_ < s_.size() && s_[i_] != quote) {
        if (s_[i_] == '<') fail("'<' in the value of attribute " + key);
        character(value);
      }
      if (i_ >= s_.size()) fail("unterminated value of attribute " + key);
      ++i_;
      if (!e.attributes.emplace(key, value).second) fail("attribute " + key + " repeated in <" + e.name + ">");
    }
    for (;;) {  // content
      if (i_ >= s_.size()) fail("<" + e.name + "> is not closed");
      if (starts("</")) {
        i_ += 2;
        const std::string closing = name();
        if (closing != e.name) fail("</" + closing + "> closes <" + e.name + ">");
        skip_space();
        if (!starts(">")) fail("malformed end tag </" + closing);
        ++i_;
        return e;
      }
      if (starts("<!--")) {
        comment();
      } else if (starts("<![CDATA[") || starts("<!") || starts("<?")) {
        fail("unsupported markup");
      } else if (starts("<")) {
        e.children.push_back(element());
      } else {
        character(e.text);
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

void collect(const XmlElement& e, const std::string& name, const std::string& css_class,
             std::vector<const XmlElement*>& out) {
  if ((name.empty() || e.name == name) && (css_class.empty() || e.attribute("class") == css_class)) out.push_back(&e);
  for (const auto& c : e.children) collect(c, name, css_class, out);
}

}  // namespace

XmlElement parse_xml(std::string_view document) { return Parser(document).document(); }

std::vector<const XmlElement*> find_elements(const XmlElement& root, const std::string& name,
                                             const std::string& css_class) {
  std::vector<const XmlElement*> out;
  collect(root, name, css_class, out);
  return out;
}

}  // namespace difftx::testing
