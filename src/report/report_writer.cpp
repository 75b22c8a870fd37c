#include "report/report_writer.h"

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "report/report_charts.h"
#include "report/report_page.h"
#include "results/results.h"

namespace difftx::report {

ReportSummary write_report(const std::filesystem::path& results_json, const std::filesystem::path& out_dir) {
  const std::string text = io::read_whole_file(results_json);
  const ExperimentResults results =
      results::parse_experiment_results(io::parse_json_text(text, results_json.string()), results_json.string());
  const ReportCharts charts = build_report_charts(results);

  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  DIFFTX_CHECK(!ec, "cannot create the report directory '", out_dir.string(), "': ", ec.message());
  ReportSummary summary;
  summary.omitted = charts.omitted;
  const auto write = [&](const std::string& name, const std::string& bytes) {
    io::write_file_atomically(out_dir / name, bytes);
    summary.written.push_back(out_dir / name);
  };
  const auto source_dir = std::filesystem::weakly_canonical(std::filesystem::absolute(results_json).parent_path());
  if (std::filesystem::weakly_canonical(std::filesystem::absolute(out_dir)) != source_dir) write("results.json", text);
  for (const auto& c : charts.charts) write(c.file, c.svg);
  write("index.html", report_page_html(results, charts, "results.json"));
  return summary;
}

}  // namespace difftx::report
