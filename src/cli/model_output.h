// The options of commands that write a model directory (convert, init): --out, --to, --dtype.
#pragma once
#include <filesystem>
#include <string>

#include "cli/args.h"
#include "io/safetensors.h"
#include "model/model.h"

namespace difftx::cli {

struct ModelOutput {
  std::filesystem::path dir;
  std::string format;  // "difftx" or "hf"
  StoredFloat stored = StoredFloat::f32;
};

// Reads and checks --out (must not exist, or be an empty directory: a model is never
// overwritten), --to and --dtype.
ModelOutput model_output_options(Args& args);
void write_model(const Model& model, const ModelOutput& out);

inline constexpr const char* kModelOutputUsage =
    "  --out DIR          the new model directory (must not exist, or be empty)\n"
    "  --to difftx|hf     difftx's own format (default), or Hugging Face's LlamaForCausalLM\n"
    "                     (baseline) / DiffLlamaForCausalLM (diff); diff2 has no HF class\n"
    "  --dtype f32|bf16|f16  how weights are stored (default f32)\n";

}  // namespace difftx::cli
