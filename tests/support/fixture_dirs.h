// The fixture cases under a directory: the names of its subdirectories, sorted (none when the
// directory is missing, so a test parameterised over them lists no cases rather than failing to
// start).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace difftx::testing {

std::vector<std::string> subdirectory_names(const std::filesystem::path& dir);

}  // namespace difftx::testing
