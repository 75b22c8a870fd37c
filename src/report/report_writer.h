// A report directory: the charts (one .svg each) and index.html, rendered from results.json.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace difftx::report {

struct ReportSummary {
  std::vector<std::filesystem::path> written;  // the files, index.html last
  std::vector<std::string> omitted;            // charts left out, with the reason
};

// Reads `results_json` and writes the charts and index.html into `out_dir` (created when
// missing); every file is replaced atomically. When out_dir is not the results' directory,
// results.json is copied there too, so that the directory stands alone.
ReportSummary write_report(const std::filesystem::path& results_json, const std::filesystem::path& out_dir);

}  // namespace difftx::report
