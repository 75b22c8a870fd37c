// `difftx convert`: a model directory into another format or storage type (docs/FORMATS.md):
// difftx's own (any weight type), Hugging Face's LlamaForCausalLM / DiffLlamaForCausalLM /
// MotifForCausalLM / Phi4FlashForCausalLM (F32/BF16/F16), or llama.cpp's GGUF for baseline models.
#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/model_output.h"

namespace difftx::cli {
namespace {
namespace fs = std::filesystem;

int run_convert(Args& args) {
  const fs::path in = args.require("model");
  const model::ModelOutput out = model_output_options(args);
  args.finish();
  const model::ModelConfig config = model::convert_model(in, out);
  std::printf("wrote %s (%s, %s, %.3fM parameters)\n", out.dir.string().c_str(), out.format.c_str(),
              kernels::weight_type_name(out.dtype), config.total_parameters() / 1e6);
  return 0;
}

}  // namespace

DIFFTX_COMMAND("convert", "write a model directory in another format or storage type",
               std::string("  --model DIR        a model directory (difftx, or Hugging Face llama, diffllama, Motif,\n"
                           "                     phi4flash)\n") +
                   kModelOutputUsage,
               run_convert);

}  // namespace difftx::cli
