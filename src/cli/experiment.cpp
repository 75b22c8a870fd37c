// `difftx experiment TARGET`: the paper's experiments end to end, and their report.
#include <map>

#include "cli/command.h"
#include "cli/experiments.h"
#include "core/error.h"

namespace difftx::cli {
namespace {

const std::map<std::string, int (*)(Args&)>& targets() {
  static const std::map<std::string, int (*)(Args&)> t = {
      {"compare", experiment_compare},
      {"report", experiment_report},
  };
  return t;
}

int run_experiment(Args& args) {
  const auto target = args.take_positional();
  DIFFTX_CHECK(target.has_value(), "experiment: name a target (see difftx experiment --help)");
  auto it = targets().find(*target);
  DIFFTX_CHECK(it != targets().end(), "experiment: unknown target '", *target, "'");
  return it->second(args);
}

}  // namespace

DIFFTX_COMMAND("experiment", "the paper's experiments end to end, and their report",
               experiment_compare_help() +
               "  difftx experiment report --results DIR/results.json [--out DIR]\n"
               "                                              (re)render the charts and index.html from results.json\n"
               "                                              into --out (default: the directory of results.json)",
               run_experiment);

}  // namespace difftx::cli
