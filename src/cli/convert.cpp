// `difftx convert`: a model directory into another format or storage type (docs/FORMATS.md):
// difftx's own and Hugging Face's LlamaForCausalLM / DiffLlamaForCausalLM, F32/BF16/F16.
#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "core/error.h"
#include "model/formats/difftx_format.h"
#include "model/formats/hf_format.h"
#include "model/model_io.h"

namespace difftx::cli {
namespace {
namespace fs = std::filesystem;

// Tokenizer files travel with the weights unchanged; each format's readers find their own.
constexpr const char* kTokenizerFiles[] = {"tokenizer.tiktoken", "tokenizer.tiktoken.json", "tokenizer.json",
                                          "tokenizer_config.json", "special_tokens_map.json",
                                          "generation_config.json"};

StoredFloat stored_float_from_name(const std::string& name) {
  if (name == "f32") return StoredFloat::f32;
  if (name == "bf16") return StoredFloat::bf16;
  if (name == "f16") return StoredFloat::f16;
  fail("--dtype: '", name.substr(0, 64), "' is not a storage type (f32, bf16, f16)");
}

int run_convert(Args& args) {
  const fs::path in = args.require("model");
  const fs::path out = args.require("out");
  const std::string to = args.get("to", "difftx");
  const StoredFloat stored = stored_float_from_name(args.get("dtype", "f32"));
  args.finish();
  DIFFTX_CHECK(to == "difftx" || to == "hf", "--to: '", to.substr(0, 64), "' is not a format (difftx, hf)");
  DIFFTX_CHECK(!out.empty(), "--out: an empty path");
  DIFFTX_CHECK(!fs::exists(out) || (fs::is_directory(out) && fs::is_empty(out)), "--out ", out.string(),
               ": exists and is not an empty directory (convert never overwrites a model)");

  const Model model = load_model_dir(in);
  if (to == "hf") save_hf_model(model, out, stored);
  else save_difftx_model(model, out, stored);
  for (const char* name : kTokenizerFiles)
    if (fs::is_regular_file(in / name)) fs::copy_file(in / name, out / name);
  std::printf("wrote %s (%s, %s, %lld parameters)\n", out.string().c_str(), to.c_str(),
              stored_float_name(stored), static_cast<long long>(model.config.total_parameters()));
  return 0;
}

}  // namespace

DIFFTX_COMMAND("convert", "write a model directory in another format or storage type",
               "  --model DIR        a model directory (difftx, or Hugging Face llama / diffllama)\n"
               "  --out DIR          the new model directory (must not exist, or be empty)\n"
               "  --to difftx|hf     difftx's own format (default), or Hugging Face's LlamaForCausalLM\n"
               "                     (baseline) / DiffLlamaForCausalLM (diff); diff2 has no HF class\n"
               "  --dtype f32|bf16|f16  how weights are stored (default f32)",
               run_convert);

}  // namespace difftx::cli
