#include "cli/args.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "core/error.h"
#include "data/utf8.h"

namespace difftx::cli {

Args::Args(std::string command, const std::vector<std::string>& argv) : command_(std::move(command)) {
  std::string current;
  for (const std::string& a : argv) {
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      const size_t eq = a.find('=');
      current = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      auto& slot = values_[current];
      if (eq != std::string::npos) {
        slot.push_back(a.substr(eq + 1));
        current.clear();
      }
    } else if (!current.empty()) {
      values_[current].push_back(a);
    } else {
      positional_.push_back(a);
    }
  }
  // Options and file names end up in JSON files (run.json, metadata.json), which hold UTF-8.
  const auto check_utf8 = [&](const std::string& text, const std::string& what) {
    const size_t bad = data::valid_utf8_prefix(text);
    DIFFTX_CHECK(bad == text.size(), command_, ": ", what, " is not valid UTF-8 (byte ", bad,
                 "); difftx records options and file names as UTF-8 text: rename the file or use another path");
  };
  for (const auto& [name, values] : values_) {
    check_utf8(name, "option --" + name);
    for (const std::string& v : values) check_utf8(v, "the value of --" + name);
  }
  for (const std::string& p : positional_) check_utf8(p, "argument '" + p + "'");
}

bool Args::flag(const std::string& name) {
  used_.insert(name);
  auto it = values_.find(name);
  if (it == values_.end()) return false;
  DIFFTX_CHECK(it->second.empty(), command_, ": --", name, " takes no value");
  return true;
}

std::optional<std::string> Args::get(const std::string& name) {
  used_.insert(name);
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  DIFFTX_CHECK(it->second.size() == 1, command_, ": --", name, " needs exactly one value, got ",
               it->second.size());
  return it->second[0];
}

std::string Args::get(const std::string& name, const std::string& fallback) {
  return get(name).value_or(fallback);
}

std::string Args::require(const std::string& name) {
  auto v = get(name);
  DIFFTX_CHECK(v.has_value(), command_, ": missing required option --", name);
  DIFFTX_CHECK(!v->empty(), command_, ": --", name, " needs a non-empty value");
  return *v;
}

std::vector<std::string> Args::list(const std::string& name) {
  used_.insert(name);
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<int64_t> parse_integer(const std::string& text, IntRange r) {
  const char* begin = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const char* end = text.data() + text.size();
  int64_t value = 0;
  const auto [stop, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || stop != end || begin == end || value < r.min || value > r.max) return std::nullopt;
  return value;
}

std::optional<double> parse_number(const std::string& text, NumberRange r) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  char* stop = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &stop);
  if (errno == ERANGE || stop != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  const bool low = r.min_excluded ? value <= r.min : value < r.min;
  const bool high = r.max_excluded ? value >= r.max : value > r.max;
  if (low || high) return std::nullopt;
  return value;
}

std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> out;
  for (size_t begin = 0;;) {
    const size_t comma = text.find(',', begin);
    out.push_back(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return out;
    begin = comma + 1;
  }
}

namespace {

std::string range_text(IntRange r) { return concat("an integer in [", r.min, ", ", r.max, "]"); }

std::string range_text(NumberRange r) {
  if (r.max >= 1e300) return concat("a finite number ", r.min_excluded ? "> " : ">= ", r.min);
  return concat("a finite number in ", r.min_excluded ? "(" : "[", r.min, ", ", r.max, r.max_excluded ? ")" : "]");
}

// The value of --name, `text`, converted; the error names the option, the text and the range.
template <typename Range, typename Parse>
auto parse_one(const std::string& command, const std::string& name, const std::string& text, Range range,
               Parse parse) {
  const auto value = parse(text, range);
  DIFFTX_CHECK(value.has_value(), command, ": --", name, " expects ", range_text(range), ", got '", text, "'");
  return *value;
}

// Splits "a,b,c" and converts each item; errors name the option, the list and the range.
template <typename Range, typename Parse>
auto parse_list(const std::string& command, const std::string& name, const std::string& text, Range range,
                Parse parse) {
  std::vector<typename decltype(parse(text, range))::value_type> out;
  for (const std::string& item : comma_items(text)) {
    const auto value = parse(item, range);
    DIFFTX_CHECK(value.has_value(), command, ": --", name, " expects a comma-separated list of ",
                 std::is_same_v<Range, IntRange> ? "integers" : "numbers", ", got '", text, "' (each must be ",
                 range_text(range), ")");
    out.push_back(*value);
  }
  return out;
}

}  // namespace

int64_t Args::get_int(const std::string& name, int64_t fallback, IntRange range) {
  const auto v = get(name);
  return v ? parse_one(command_, name, *v, range, parse_integer) : fallback;
}

double Args::get_double(const std::string& name, double fallback, NumberRange range) {
  const auto v = get(name);
  return v ? parse_one(command_, name, *v, range, parse_number) : fallback;
}

std::vector<int64_t> Args::get_int_list(const std::string& name, const std::string& fallback, IntRange range) {
  return parse_list(command_, name, get(name, fallback), range, parse_integer);
}

std::vector<double> Args::get_double_list(const std::string& name, const std::string& fallback,
                                          NumberRange range) {
  return parse_list(command_, name, get(name, fallback), range, parse_number);
}

std::vector<std::string> Args::get_word_list(const std::string& name, const std::string& fallback) {
  const std::string text = get(name, fallback);
  std::vector<std::string> out = comma_items(text);
  for (const std::string& word : out)
    DIFFTX_CHECK(!word.empty(), command_, ": --", name, " expects a comma-separated list of names, got '", text, "'");
  return out;
}

std::optional<std::string> Args::take_positional() {
  if (positional_.empty()) return std::nullopt;
  std::string first = positional_.front();
  positional_.erase(positional_.begin());
  return first;
}

void Args::finish() const {
  for (const auto& [name, vals] : values_)
    DIFFTX_CHECK(used_.count(name), command_, ": unknown option --", name,
                 " (see difftx ", command_, " --help)");
  DIFFTX_CHECK(positional_.empty(), command_, ": unexpected argument '",
               positional_.empty() ? "" : positional_[0], "'");
}

}  // namespace difftx::cli
