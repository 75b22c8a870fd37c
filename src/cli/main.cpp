// difftx: one binary, one subcommand per file in this folder.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <new>

#include "backends/vulkan/vulkan.h"
#include "cli/command.h"
#include "core/error.h"
#include "backends/cpu/cpu_level.h"
#include "kernels/gemm.h"

namespace difftx::cli {

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}

namespace {

void print_help() {
  auto commands = command_registry();
  std::sort(commands.begin(), commands.end(),
            [](const Command& a, const Command& b) { return a.name < b.name; });
  std::printf("difftx: train, run and measure Differential Transformer language models\n\n"
              "usage: difftx COMMAND [options]   (difftx COMMAND --help for its options)\n"
              "       difftx --version           (the build's CPU levels, the one in use, the Vulkan devices)\n\n");
  for (const auto& c : commands) std::printf("  %-12s %s\n", c.name.c_str(), c.summary.c_str());
}

// The build and the CPU level its kernels run at (kernels/cpu_level.h; DIFFTX_CPU chooses one).
int print_version() {
  std::string built, runs;
  for (difftx::CpuLevel level : difftx::cpu_levels_built()) built += std::string(built.empty() ? "" : " ") + cpu_level_name(level);
  for (difftx::CpuLevel level : difftx::cpu_levels_runnable()) runs += std::string(runs.empty() ? "" : " ") + cpu_level_name(level);
  std::printf("difftx %s\nlevels built: %s\nthis CPU runs: %s\n", DIFFTX_VERSION_TEXT, built.c_str(), runs.c_str());
  try {
    std::printf("cpu level: %s\n", difftx::cpu_level_description().c_str());
  } catch (const difftx::Error& e) {
    std::fprintf(stderr, "difftx --version: error: %s\n", e.what());
    return 1;
  }
  std::printf("OpenBLAS kernels: %s\n", difftx::kernels::gemm_kernel_name().c_str());
  for (const std::string& line : difftx::backends::vulkan::device_listing()) std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace
}  // namespace difftx::cli

int main(int argc, char** argv) {
  using namespace difftx::cli;
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    print_help();
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  if (name == "--version") return print_version();
  const auto& commands = command_registry();
  auto it = std::find_if(commands.begin(), commands.end(),
                         [&](const Command& c) { return c.name == name; });
  if (it == commands.end()) {
    std::fprintf(stderr, "difftx: unknown command '%s' (see difftx --help)\n", name.c_str());
    return 2;
  }
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (std::find(rest.begin(), rest.end(), "--help") != rest.end()) {
    std::printf("usage: difftx %s [options]\n%s\n\n%s\n", name.c_str(), it->summary.c_str(),
                it->usage.c_str());
    return 0;
  }
  try {
    Args args(name, rest);
    return it->run(args);
  } catch (const difftx::Error& e) {
    std::fprintf(stderr, "difftx %s: error: %s\n", name.c_str(), e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "difftx %s: error: out of memory; a size from an option or a file (--micro-batch, --seq-len, "
                 "--context, config.json) asks for more than this machine has\n",
                 name.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "difftx %s: unexpected error: %s\n", name.c_str(), e.what());
    return 1;
  }
}
