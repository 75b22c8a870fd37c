// `difftx convert`: a model directory into another format or storage type (docs/FORMATS.md):
// difftx's own and Hugging Face's LlamaForCausalLM / DiffLlamaForCausalLM, F32/BF16/F16.
#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/model_output.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"
#include "model/model_io.h"

namespace difftx::cli {
namespace {
namespace fs = std::filesystem;

// Files that travel with the weights unchanged.
constexpr const char* kSidecarFiles[] = {"tokenizer.tiktoken", "tokenizer.tiktoken.json", "tokenizer.json",
                                         "tokenizer_config.json", "special_tokens_map.json",
                                         "generation_config.json"};

// The tokenizer goes along: as it is, except that a Hugging Face directory gets tokenizer.json
// (and tokenizer_config.json) in place of difftx's tiktoken files, which transformers cannot read.
void copy_tokenizer(const fs::path& in, const ModelOutput& out) {
  const bool tiktoken = fs::is_regular_file(in / data::kTokenizerRanksFile);
  if (tiktoken && out.format == "hf") {
    data::write_hf_tokenizer(data::load_tokenizer(in.string()), out.dir);
    return;
  }
  for (const char* name : kSidecarFiles)
    if (fs::is_regular_file(in / name)) fs::copy_file(in / name, out.dir / name);
}

int run_convert(Args& args) {
  const fs::path in = args.require("model");
  const ModelOutput out = model_output_options(args);
  args.finish();
  const Model model = load_model_dir(in);
  write_model(model, out);
  copy_tokenizer(in, out);
  std::printf("wrote %s (%s, %s, %.3fM parameters)\n", out.dir.string().c_str(), out.format.c_str(),
              weight_type_name(out.dtype), model.config.total_parameters() / 1e6);
  return 0;
}

}  // namespace

DIFFTX_COMMAND("convert", "write a model directory in another format or storage type",
               std::string("  --model DIR        a model directory (difftx, or Hugging Face llama / diffllama)\n") +
                   kModelOutputUsage,
               run_convert);

}  // namespace difftx::cli
