// `difftx analyze TARGET`: the paper's analyses on a trained model (targets: analyze_targets.h).
#include <map>

#include "cli/analyze_targets.h"
#include "cli/command.h"
#include "core/error.h"

namespace difftx::cli {
namespace {

const std::map<std::string, int (*)(Args&)>& targets() {
  static const std::map<std::string, int (*)(Args&)> t = {
      {"niah", analyze_niah},
      {"mqar", analyze_mqar},
  };
  return t;
}

int run_analyze(Args& args) {
  const auto target = args.take_positional();
  DIFFTX_CHECK(target.has_value(), "analyze: name a target (see difftx analyze --help)");
  auto it = targets().find(*target);
  DIFFTX_CHECK(it != targets().end(), "analyze: unknown target '", *target, "' (see difftx analyze --help)");
  return it->second(args);
}

}  // namespace

DIFFTX_COMMAND("analyze", "the paper's analyses of a trained model (retrieval, ...)",
               "  difftx analyze niah --model DIR --data DIR [--contexts 256,512] [--needles 1,2,4,6] [--queried 1,2]\n"
               "                      [--depths 0,0.25,0.5,0.75,1] [--samples N] [--seed S] [--value-digits D]\n"
               "                      [--split val] [--json FILE] [--quiet]\n"
               "      multi-needle retrieval (paper Table 2): greedy exact-match accuracy by context, needles N,\n"
               "      queried R and depth; haystacks from the --split of --data (default val: text unseen in training)\n"
               "  difftx analyze mqar --model DIR --data DIR [--pairs P] [--queries Q] [--samples N] [--seed S]\n"
               "                      [--json FILE]\n"
               "      multi-query associative recall (Zoology): answer accuracy and loss; --data gives the tokenizer\n"
               "  Each prints a table and, with --json FILE, writes its object of the results schema.",
               run_analyze);

}  // namespace difftx::cli
