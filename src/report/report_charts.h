// The report's charts, built from experiment results: one SVG document each, with the title
// and caption the page shows beside it. Charts whose data no model has are left out, with
// the reason.
#pragma once
#include <string>
#include <vector>

#include "results/results.h"

namespace difftx::report {

// The report draws the results schema (results/results.h).
using results::ExperimentResults;
using results::ModelResults;

struct ReportChart {
  std::string file;  // "loss_curves.svg"
  std::string title;
  std::string caption;  // plain text: how to read the chart
  std::string svg;
  double width = 0, height = 0;  // px, as in the SVG
};

struct ReportCharts {
  std::vector<ReportChart> charts;
  std::vector<std::string> omitted;  // "NIAH accuracy heatmap: no model has niah results"
};

ReportCharts build_report_charts(const ExperimentResults& results);

// Model i's colour: its variant's (the first model of that name), so a variant keeps one colour
// over its seeds. Its label: the name, with ", seed S" when the results hold several seeds.
std::string model_colour(const ExperimentResults& results, size_t i);
std::string model_label(const ExperimentResults& results, size_t i);

// One chart per figure; exposed for tests. Each returns nothing (empty svg) when no model has
// the data it draws.
ReportChart loss_curves_chart(const ExperimentResults& results);
ReportChart niah_heatmap_chart(const ExperimentResults& results);
ReportChart attention_map_chart(const ExperimentResults& results);
ReportChart outlier_chart(const ExperimentResults& results);
ReportChart quantization_chart(const ExperimentResults& results);
ReportChart attention_allocation_chart(const ExperimentResults& results);
ReportChart seed_spread_chart(const ExperimentResults& results);

}  // namespace difftx::report
