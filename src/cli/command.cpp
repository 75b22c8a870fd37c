#include "cli/command.h"

#include "core/error.h"

namespace difftx::cli {
namespace {

std::string names(const Targets& targets) {
  std::string out;
  for (const auto& [name, run] : targets) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

std::function<int(Args&)> run_targets(const std::string& command, const Targets& targets) {
  return [command, targets](Args& args) {
    const auto target = args.take_positional();
    DIFFTX_CHECK(target.has_value(), command, ": name a target (", names(targets), "; see difftx ", command,
                 " --help)");
    const auto it = targets.find(*target);
    DIFFTX_CHECK(it != targets.end(), command, ": unknown target '", *target, "' (the targets: ", names(targets),
                 "; see difftx ", command, " --help)");
    return it->second(args);
  };
}

}  // namespace difftx::cli
