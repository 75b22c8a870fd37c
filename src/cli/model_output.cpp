#include "cli/model_output.h"

namespace difftx::cli {

model::ModelOutput model_output_options(Args& args) {
  const std::string dir = args.require("out");
  const std::string format = args.get("to", "difftx");
  const std::string dtype = args.get("dtype", "f32");
  return model::model_output(dir, format, dtype, args.get("head-dtype"), OptionSpelling::flag);
}

}  // namespace difftx::cli
