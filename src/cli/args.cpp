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

int64_t Args::get_int(const std::string& name, int64_t fallback) {
  auto v = get(name);
  if (!v) return fallback;
  size_t used = 0;
  int64_t out = 0;
  try {
    out = std::stoll(*v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  DIFFTX_CHECK(used == v->size() && !v->empty(), command_, ": --", name,
               " expects an integer, got '", *v, "'");
  return out;
}

double Args::get_double(const std::string& name, double fallback) {
  auto v = get(name);
  if (!v) return fallback;
  size_t used = 0;
  double out = 0;
  try {
    out = std::stod(*v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  DIFFTX_CHECK(used == v->size() && !v->empty(), command_, ": --", name,
               " expects a number, got '", *v, "'");
  return out;
}

namespace {

// Splits "a,b,c" and converts each item with parse(item, &used); errors name the option.
template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& command, const std::string& name, const std::string& text, Parse parse,
                          const char* kind) {
  std::vector<T> out;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    const std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    size_t used = 0;
    T value{};
    try {
      value = parse(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    DIFFTX_CHECK(!item.empty() && used == item.size(), command, ": --", name, " expects a comma-separated list of ",
                 kind, ", got '", text, "'");
    out.push_back(value);
    if (comma == std::string::npos) return out;
    begin = comma + 1;
  }
}

}  // namespace

std::vector<int64_t> Args::get_int_list(const std::string& name, const std::string& fallback) {
  return parse_list<int64_t>(command_, name, get(name, fallback),
                             [](const std::string& s, size_t* used) { return std::stoll(s, used); }, "integers");
}

std::vector<double> Args::get_double_list(const std::string& name, const std::string& fallback) {
  return parse_list<double>(command_, name, get(name, fallback),
                            [](const std::string& s, size_t* used) { return std::stod(s, used); }, "numbers");
}

std::vector<std::string> Args::get_word_list(const std::string& name, const std::string& fallback) {
  return parse_list<std::string>(command_, name, get(name, fallback),
                                 [](const std::string& s, size_t* used) { *used = s.size(); return s; }, "names");
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
