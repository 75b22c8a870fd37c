// Python's str methods on UTF-8 strings, by Unicode code point (what templates call on
// message contents: strip, split, startswith, upper, title, ...). Case mapping is ICU's full
// Unicode mapping, as Python's (title case of a first letter is taken as its upper case).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace difftx::chat {

// str.strip / lstrip / rstrip: chars absent strips Python's whitespace (incl. U+3000, U+00A0).
std::string py_strip(const std::string& s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit); sep absent splits on runs of whitespace.
std::vector<std::string> py_split(const std::string& s, const std::optional<std::string>& sep, long maxsplit);
std::vector<std::string> py_splitlines(const std::string& s);
std::string py_replace(const std::string& s, const std::string& old, const std::string& with, long count);
std::string py_upper(const std::string& s);
std::string py_lower(const std::string& s);
std::string py_capitalize(const std::string& s);
std::string jinja_title(const std::string& s);  // jinja2's title filter (= str.title for ASCII)
bool py_isspace(const std::string& code_point);
size_t py_len(const std::string& s);  // code points

}  // namespace difftx::chat
