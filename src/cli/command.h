// Subcommands register themselves: each src/cli/<name>.cpp defines one with DIFFTX_COMMAND.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/args.h"

namespace difftx::cli {

struct Command {
  std::string name;
  std::string summary;  // one line for `difftx --help`
  std::string usage;    // options, for `difftx NAME --help`
  std::function<int(Args&)> run;
};

std::vector<Command>& command_registry();

struct CommandRegistration {
  explicit CommandRegistration(Command c) { command_registry().push_back(std::move(c)); }
};

// The run of a command made of targets (`difftx analyze niah ...`): it runs the target its first
// positional word names. Errors name the command and list its targets.
using Targets = std::map<std::string, int (*)(Args&)>;
std::function<int(Args&)> run_targets(const std::string& command, const Targets& targets);

}  // namespace difftx::cli

#define DIFFTX_COMMAND_CAT2(a, b) a##b
#define DIFFTX_COMMAND_CAT(a, b) DIFFTX_COMMAND_CAT2(a, b)
#define DIFFTX_COMMAND(...)                                                                   \
  static ::difftx::cli::CommandRegistration DIFFTX_COMMAND_CAT(difftx_command_, __LINE__)( \
      ::difftx::cli::Command{__VA_ARGS__})
