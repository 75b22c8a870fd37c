// `difftx convert`: a model directory into another format or storage type (docs/FORMATS.md):
// difftx's own (any weight type), Hugging Face's LlamaForCausalLM / DiffLlamaForCausalLM
// (F32/BF16/F16), or llama.cpp's GGUF for baseline models.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <system_error>

#include "cli/command.h"
#include "cli/model_output.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"
#include "model/formats/gguf_format.h"
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

// Removes --out when this conversion created it and failed before anything was written into it
// (a weight found non-finite while streaming), so that nothing looks like a model.
class OutputDirGuard {
 public:
  explicit OutputDirGuard(fs::path dir) : dir_(std::move(dir)), created_(!fs::exists(dir_)) {}
  ~OutputDirGuard() {
    std::error_code ignored;
    if (created_ && !done_ && fs::is_directory(dir_, ignored) && fs::is_empty(dir_, ignored)) fs::remove(dir_, ignored);
  }
  void done() { done_ = true; }

 private:
  fs::path dir_;
  bool created_, done_ = false;
};

// The weights stream: config.json and every safetensors header are checked first, then each
// tensor is read, widened, converted and written before the next (docs/FORMATS.md "Streaming
// conversion"), so the memory used is a few tensors' whatever the model's size.
int run_convert(Args& args) {
  const fs::path in = args.require("model");
  const ModelOutput out = model_output_options(args);
  args.finish();
  const std::unique_ptr<StoredModel> model = open_model_dir(in);
  OutputDirGuard guard(out.dir);
  if (out.format == "gguf") {
    require_gguf_architecture(model->config());
    DIFFTX_CHECK(fs::exists(in / data::kTokenizerRanksFile) || fs::exists(in / data::kHfTokenizerFile), in.string(),
                 ": --to gguf needs the model's tokenizer (", data::kHfTokenizerFile, " or ",
                 data::kTokenizerRanksFile, ") in the directory: GGUF carries the vocabulary");
    const data::Tokenizer tokenizer = data::load_tokenizer(in.string());
    write_model(*model, out, &tokenizer);
  } else {
    write_model(*model, out);
    copy_tokenizer(in, out);
  }
  guard.done();
  std::printf("wrote %s (%s, %s, %.3fM parameters)\n", out.dir.string().c_str(), out.format.c_str(),
              weight_type_name(out.dtype), model->config().total_parameters() / 1e6);
  return 0;
}

}  // namespace

DIFFTX_COMMAND("convert", "write a model directory in another format or storage type",
               std::string("  --model DIR        a model directory (difftx, or Hugging Face llama / diffllama)\n") +
                   kModelOutputUsage,
               run_convert);

}  // namespace difftx::cli
