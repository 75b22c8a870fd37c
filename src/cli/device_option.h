// --device: the backend a command's model computes on (backends/backend.h open_backend).
#pragma once
#include "backends/backend.h"
#include "cli/args.h"

namespace difftx::cli {

#define DIFFTX_DEVICE_HELP \
  "  --device NAME         cpu (default), vulkan (the best GPU) or vulkan:N (difftx --version lists them)\n"

// The --device option's backend: an error naming the device when it cannot be opened, never a
// fall-back to another.
backends::Backend& device_option(Args& args);

}  // namespace difftx::cli
