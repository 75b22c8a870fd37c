// What the `difftx analyze` targets share (analyze_targets.h).
#include <cstdio>

#include "cli/analyze_targets.h"
#include "core/error.h"
#include "io/json_file.h"

namespace difftx::cli {

void write_analysis_json(const std::string& path, const results::Analyses& analyses) {
  if (path.empty()) return;
  io::write_json_file(path, results::to_json(analyses));
  std::printf("wrote %s\n", path.c_str());
}

}  // namespace difftx::cli
