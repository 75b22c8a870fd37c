// index.html of a report: the setup, a results table and the charts with their captions.
// Self-contained: inline CSS, no scripts, nothing fetched from the network; the charts are the
// .svg files beside it, shown with <img>.
#pragma once
#include <string>

#include "report/report_charts.h"
#include "results/results.h"

namespace difftx::report {

// The page's head (inline style) up to the opening <main>, and one chart as a <figure> with its
// title and caption: shared with the sweep's page (sweep_report.h).
std::string page_head(const std::string& title);
std::string chart_figure(const ReportChart& chart);

// `results_link` is the href of the results.json the page was made from.
std::string report_page_html(const ExperimentResults& results, const ReportCharts& charts,
                             const std::string& results_link);

}  // namespace difftx::report
