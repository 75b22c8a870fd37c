// `difftx experiment report`: renders a report directory (SVG charts + index.html) from the
// results.json that `difftx experiment compare` writes.
#include <cstdio>
#include <filesystem>

#include "cli/experiments.h"
#include "report/report_writer.h"

namespace difftx::cli {

int experiment_report(Args& args) {
  const std::filesystem::path results = args.require("results");
  const std::filesystem::path out =
      args.get("out", results.parent_path().empty() ? "." : results.parent_path().string());
  args.finish();
  const report::ReportSummary summary = report::write_report(results, out);
  for (const auto& reason : summary.omitted) std::printf("not drawn: %s\n", reason.c_str());
  std::printf("wrote %zu files; open %s\n", summary.written.size(), (out / "index.html").c_str());
  return 0;
}

}  // namespace difftx::cli
