// The scaling sweep's report (experiment/sweep.h): sweep.svg, validation loss against
// non-embedding parameters and against training tokens on log-log axes with every run as a dot
// and each variant's power law (the mean over seeds of log a and b), and index.html, which says
// how many parameters and tokens each variant needs to reach the baseline's loss, with the 95%
// interval over seeds, and lists the fitted exponents.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report_charts.h"

namespace difftx::report {

ReportChart sweep_chart(const nlohmann::json& sweep);
std::string sweep_page_html(const nlohmann::json& sweep, const ReportChart& chart);
// Writes sweep.svg and index.html into out_dir; returns the paths written.
std::vector<std::filesystem::path> write_sweep_report(const nlohmann::json& sweep, const std::filesystem::path& out_dir);

}  // namespace difftx::report
