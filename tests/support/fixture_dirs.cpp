#include "support/fixture_dirs.h"

#include <algorithm>

namespace difftx::testing {

std::vector<std::string> subdirectory_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  if (std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.is_directory()) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace difftx::testing
