#include "cli/device_option.h"

namespace difftx::cli {

backends::Backend& device_option(Args& args) { return backends::open_backend(args.get("device", "cpu")); }

}  // namespace difftx::cli
