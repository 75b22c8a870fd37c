#include "serve/request_framing.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace difftx::serve {
namespace {

// RFC 9110 §5.6.2: tchar.
bool is_token(std::string_view name) {
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return !name.empty() && std::all_of(name.begin(), name.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kSymbols.find(c) != std::string_view::npos;
  });
}

std::string_view trimmed(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

ApiError bad_framing(const std::string& what) { return ApiError(400, "the request's framing is ambiguous: " + what); }

}  // namespace

std::optional<ApiError> framing_error(const httplib::Request& req) {
  for (const auto& [name, value] : req.headers)
    if (!is_token(name))
      return bad_framing("the header name '" + name.substr(0, 64) + "' is not a token (white space before its colon?)");
  // Content-Length: one number, however often it is repeated (as headers or as a list, §8.6).
  std::optional<std::string_view> length;
  const auto lengths = req.headers.equal_range("Content-Length");
  for (auto it = lengths.first; it != lengths.second; ++it)
    for (size_t at = 0; at <= it->second.size();) {
      const size_t comma = std::min(it->second.find(',', at), it->second.size());
      const std::string_view v = trimmed(std::string_view(it->second).substr(at, comma - at));
      at = comma + 1;
      if (v.empty() || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return bad_framing("Content-Length '" + it->second.substr(0, 64) + "' is not a number of bytes");
      if (length && v != *length) return bad_framing("Content-Length values that differ");
      length = v;
    }
  const size_t codings = req.headers.count("Transfer-Encoding");
  // httplib reads no body for these methods: one declared would be read as the next request.
  const bool bodiless = req.method == "GET" || req.method == "HEAD" || req.method == "OPTIONS";
  if (bodiless && (codings > 0 || (length && length->find_first_not_of('0') != std::string_view::npos)))
    return bad_framing(req.method + " with a body");
  if (codings == 0) return std::nullopt;
  if (length) return bad_framing("both Content-Length and Transfer-Encoding");
  if (codings > 1) return bad_framing("two Transfer-Encoding headers");
  if (!equal_ignoring_case(trimmed(req.get_header_value("Transfer-Encoding")), "chunked"))
    return ApiError(501, "Transfer-Encoding '" + req.get_header_value("Transfer-Encoding").substr(0, 64) +
                             "' is not supported (only chunked)", "", "not_implemented");
  return std::nullopt;
}

bool has_body(const httplib::Request& req) {
  return req.has_header("Content-Length") || req.has_header("Transfer-Encoding");
}

}  // namespace difftx::serve
