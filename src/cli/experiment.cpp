// `difftx experiment TARGET`: the paper's experiments end to end, and their report.
#include "cli/command.h"
#include "cli/experiments.h"

namespace difftx::cli {

DIFFTX_COMMAND("experiment", "the paper's experiments end to end, and their report",
               experiment_compare_help() + experiment_sweep_help() +
               "  difftx experiment report --results DIR/results.json [--out DIR]\n"
               "                                              (re)render the charts and index.html from results.json\n"
               "                                              into --out (default: the directory of results.json)",
               run_targets("experiment", {{"compare", experiment_compare},
                                          {"sweep", experiment_sweep},
                                          {"report", experiment_report}}));

}  // namespace difftx::cli
