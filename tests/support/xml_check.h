// A strict little XML reader for tests of what we write (SVG, XHTML-like fragments): it
// rejects anything not well-formed (unbalanced or misnamed tags, unquoted or repeated
// attributes, raw '<' or '&', unknown entities, invalid UTF-8, characters XML 1.0 forbids) and
// returns the element tree with text and attribute values decoded. No DTDs, no namespaces
// processing, no CDATA: our writers produce none.
#pragma once
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace difftx::testing {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string text;  // the decoded character data directly inside this element, concatenated
  std::vector<XmlElement> children;

  std::string attribute(const std::string& key) const {
    auto it = attributes.find(key);
    return it == attributes.end() ? "" : it->second;
  }
};

struct XmlError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses a whole document: an optional <?xml ...?> declaration, comments, one root element.
XmlElement parse_xml(std::string_view document);

// Every element in the tree (root first, depth-first), optionally only those with a name
// and/or a class attribute.
std::vector<const XmlElement*> find_elements(const XmlElement& root, const std::string& name = "",
                                             const std::string& css_class = "");

}  // namespace difftx::testing
