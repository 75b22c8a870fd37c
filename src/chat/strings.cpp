#include "chat/strings.h"

#include <algorithm>
#include <set>

#include <unicode/ustring.h>

#include "chat/value.h"

namespace difftx::chat {

bool py_isspace(const std::string& c) {
  static const std::set<std::string> spaces = {
      " ", "\t", "\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x1f", "\u0085", "\u00a0", "\u1680",
      "\u2000", "\u2001", "\u2002", "\u2003", "\u2004", "\u2005", "\u2006", "\u2007", "\u2008", "\u2009",
      "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"};
  return spaces.count(c) > 0;
}

size_t py_len(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

std::string py_strip(const std::string& s, const std::optional<std::string>& chars, bool left, bool right) {
  const std::vector<std::string> cps = code_points(s);
  std::set<std::string> strip_set;
  if (chars) {
    for (auto& c : code_points(*chars)) strip_set.insert(c);
  }
  auto strip = [&](const std::string& c) { return chars ? strip_set.count(c) > 0 : py_isspace(c); };
  size_t begin = 0, end = cps.size();
  if (left)
    while (begin < end && strip(cps[begin])) ++begin;
  if (right)
    while (end > begin && strip(cps[end - 1])) --end;
  std::string out;
  for (size_t i = begin; i < end; ++i) out += cps[i];
  return out;
}

std::vector<std::string> py_split(const std::string& s, const std::optional<std::string>& sep, long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<long>(out.size()) < maxsplit) {
      const size_t at = s.find(*sep, start);
      if (at == std::string::npos) break;
      out.push_back(s.substr(start, at - start));
      start = at + sep->size();
    }
    out.push_back(s.substr(start));
    return out;
  }
  const std::vector<std::string> cps = code_points(s);
  size_t i = 0;
  while (true) {
    while (i < cps.size() && py_isspace(cps[i])) ++i;
    if (i == cps.size()) break;
    if (maxsplit >= 0 && static_cast<long>(out.size()) == maxsplit) {
      std::string rest;  // the remainder keeps its trailing whitespace, as in Python
      for (size_t k = i; k < cps.size(); ++k) rest += cps[k];
      out.push_back(rest);
      break;
    }
    std::string word;
    while (i < cps.size() && !py_isspace(cps[i])) word += cps[i++];
    out.push_back(word);
  }
  return out;
}

std::vector<std::string> py_splitlines(const std::string& s) {
  static const std::set<std::string> breaks = {"\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\u0085",
                                               "\u2028", "\u2029"};
  std::vector<std::string> out;
  const std::vector<std::string> cps = code_points(s);
  std::string line;
  for (size_t i = 0; i < cps.size(); ++i) {
    if (!breaks.count(cps[i])) {
      line += cps[i];
      continue;
    }
    if (cps[i] == "\r" && i + 1 < cps.size() && cps[i + 1] == "\n") ++i;
    out.push_back(line);
    line.clear();
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

std::string py_replace(const std::string& s, const std::string& old, const std::string& with, long count) {
  std::string out;
  if (old.empty()) {  // Python inserts `with` between every code point and at both ends
    const std::vector<std::string> cps = code_points(s);
    long n = 0;
    for (const auto& c : cps) {
      if (count < 0 || n < count) {
        out += with;
        ++n;
      }
      out += c;
    }
    if (count < 0 || n < count) out += with;
    return out;
  }
  size_t start = 0;
  long n = 0;
  while (count < 0 || n < count) {
    const size_t at = s.find(old, start);
    if (at == std::string::npos) break;
    out += s.substr(start, at - start) + with;
    start = at + old.size();
    ++n;
  }
  return out + s.substr(start);
}

namespace {

// Full Unicode case mapping (ICU's root locale, as Python's str.upper/lower: "ß" -> "SS").
std::string change_case(const std::string& s, bool upper) {
  const bool ascii = std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) {
    std::string out = s;
    for (char& c : out) {
      if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    return out;
  }
  UErrorCode err = U_ZERO_ERROR;
  std::vector<UChar> wide(s.size() + 1);
  int32_t wide_len = 0;
  u_strFromUTF8WithSub(wide.data(), static_cast<int32_t>(wide.size()), &wide_len, s.data(),
                       static_cast<int32_t>(s.size()), 0xfffd, nullptr, &err);
  if (U_FAILURE(err)) return s;
  std::vector<UChar> mapped(static_cast<size_t>(wide_len) * 3 + 1);
  const int32_t mapped_len = upper ? u_strToUpper(mapped.data(), static_cast<int32_t>(mapped.size()), wide.data(),
                                                  wide_len, "", &err)
                                   : u_strToLower(mapped.data(), static_cast<int32_t>(mapped.size()), wide.data(),
                                                  wide_len, "", &err);
  if (U_FAILURE(err)) return s;
  std::string out(static_cast<size_t>(mapped_len) * 3 + 1, '\0');
  int32_t out_len = 0;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &out_len, mapped.data(), mapped_len, &err);
  if (U_FAILURE(err)) return s;
  out.resize(static_cast<size_t>(out_len));
  return out;
}

}  // namespace

std::string py_upper(const std::string& s) { return change_case(s, true); }
std::string py_lower(const std::string& s) { return change_case(s, false); }

std::string py_capitalize(const std::string& s) {
  const std::vector<std::string> cps = code_points(s);
  if (cps.empty()) return s;
  return py_upper(cps[0]) + py_lower(s.substr(cps[0].size()));
}

std::string jinja_title(const std::string& s) {
  // jinja2 splits at runs of - ( { [ < and whitespace and capitalizes each piece.
  std::string out;
  bool word_start = true;
  for (const std::string& c : code_points(s)) {
    if (c == "-" || c == "(" || c == "{" || c == "[" || c == "<" || py_isspace(c)) {
      out += c;
      word_start = true;
    } else {
      out += word_start ? py_upper(c) : py_lower(c);
      word_start = false;
    }
  }
  return out;
}

}  // namespace difftx::chat
