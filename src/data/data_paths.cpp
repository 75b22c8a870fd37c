#include "data/data_paths.h"
#include "source_dir.h"

#include <cstdlib>

namespace difftx::data {

std::filesystem::path data_root() {
  const char* env = std::getenv("DIFFTX_DATA");
  if (env != nullptr && *env != '\0') return env;
  return std::filesystem::path(DIFFTX_SOURCE_DIR) / "data";
}

std::filesystem::path tokenizer_dir() { return data_root() / "tokenizers"; }

}  // namespace difftx::data
