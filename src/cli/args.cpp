#include "cli/args.h"

#include "core/error.h"

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
  return *v;
}

std::vector<std::string> Args::list(const std::string& name) {
  used_.insert(name);
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

namespace {

// text parsed by parse(text, &used) when it takes all of text, else nullopt.
template <typename T, typename Parse>
std::optional<T> parse_whole(const std::string& text, Parse parse) {
  size_t used = 0;
  T value{};
  try {
    value = parse(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (text.empty() || used != text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int64_t> parse_integer(const std::string& text) {
  return parse_whole<int64_t>(text, [](const std::string& s, size_t* used) { return std::stoll(s, used); });
}

std::optional<double> parse_number(const std::string& text) {
  return parse_whole<double>(text, [](const std::string& s, size_t* used) { return std::stod(s, used); });
}

template <typename T>
T Args::get_parsed(const std::string& name, T fallback, std::optional<T> (*parse)(const std::string&),
                     const char* kind) {
  const auto v = get(name);
  if (!v) return fallback;
  const std::optional<T> out = parse(*v);
  DIFFTX_CHECK(out.has_value(), command_, ": --", name, " expects ", kind, ", got '", *v, "'");
  return *out;
}

int64_t Args::get_int(const std::string& name, int64_t fallback) {
  return get_parsed(name, fallback, parse_integer, "an integer");
}

double Args::get_double(const std::string& name, double fallback) {
  return get_parsed(name, fallback, parse_number, "a number");
}

namespace {

// Splits "a,b,c" and converts each item with parse(item) (nullopt: not one); errors name the option.
template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& command, const std::string& name, const std::string& text, Parse parse,
                          const char* kind) {
  std::vector<T> out;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    const std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    const std::optional<T> value = parse(item);
    DIFFTX_CHECK(value.has_value(), command, ": --", name, " expects a comma-separated list of ", kind, ", got '",
                 text, "'");
    out.push_back(*value);
    if (comma == std::string::npos) return out;
    begin = comma + 1;
  }
}

}  // namespace

std::vector<int64_t> Args::get_int_list(const std::string& name, const std::string& fallback) {
  return parse_list<int64_t>(command_, name, get(name, fallback), parse_integer, "integers");
}

std::vector<double> Args::get_double_list(const std::string& name, const std::string& fallback) {
  return parse_list<double>(command_, name, get(name, fallback), parse_number, "numbers");
}

std::vector<std::string> Args::get_word_list(const std::string& name, const std::string& fallback) {
  return parse_list<std::string>(command_, name, get(name, fallback),
                                 [](const std::string& s) { return s.empty() ? std::nullopt : std::optional(s); },
                                 "names");
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
