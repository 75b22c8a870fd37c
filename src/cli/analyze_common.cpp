// What the `difftx analyze` targets share (analyze_targets.h).
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cli/analyze_targets.h"
#include "core/error.h"
#include "io/json_file.h"

namespace difftx::cli {

std::vector<double> parse_number_list(const std::string& option, const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    DIFFTX_CHECK(used == item.size() && !item.empty() && std::isfinite(x), "--", option, ": '", item,
                 "' is not a number (expected a comma-separated list such as 0,0.5,1)");
    out.push_back(x);
  }
  DIFFTX_CHECK(!out.empty(), "--", option, ": empty list");
  return out;
}

std::vector<int> parse_int_list(const std::string& option, const std::string& text) {
  std::vector<int> out;
  for (double x : parse_number_list(option, text)) {
    DIFFTX_CHECK(x == std::floor(x) && std::fabs(x) < 1e9, "--", option, ": ", x, " is not an integer");
    out.push_back(static_cast<int>(x));
  }
  return out;
}

void write_analysis_json(const std::string& path, const nlohmann::json& value) {
  if (path.empty()) return;
  write_json_file(path, value);
  std::printf("wrote %s\n", path.c_str());
}

}  // namespace difftx::cli
