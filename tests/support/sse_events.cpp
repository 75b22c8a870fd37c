#include "support/sse_events.h"

#include <gtest/gtest.h>

#include <sstream>

namespace difftx::testing {

std::vector<nlohmann::json> sse_events(const std::string& sse) {
  std::vector<nlohmann::json> out;
  std::istringstream in(sse);
  std::string type, line;
  while (std::getline(in, line)) {
    if (line.rfind("event: ", 0) == 0) type = line.substr(7);
    if (line.rfind("data: ", 0) != 0) continue;
    out.push_back(nlohmann::json::parse(line.substr(6)));
    EXPECT_EQ(out.back()["type"], type);
  }
  return out;
}

}  // namespace difftx::testing
