// The options of commands that write a model directory (convert, init): --out, --to, --dtype.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "cli/args.h"
#include "data/tokenizer.h"
#include "io/safetensors.h"
#include "kernels/quant/weight_type.h"
#include "model/model.h"
#include "model/weight_source.h"

namespace difftx::cli {

struct ModelOutput {
  std::filesystem::path dir;
  std::string format;  // "difftx", "hf" or "gguf"
  WeightType dtype = WeightType::f32;     // --dtype: the matrices' type (model/storage_plan.h)
  std::optional<WeightType> head_dtype;   // --head-dtype: the embedding's and LM head's
  StoredFloat stored = StoredFloat::f32;  // how the F32 tensors are written (bf16/f16 follow --dtype)
};

// Reads and checks --out (must not exist, or be an empty directory: a model is never
// overwritten), --to and --dtype.
ModelOutput model_output_options(Args& args);
// Writes the weights `source` gives one tensor at a time, converted as `out` says (a few tensors
// in memory at once, whatever the model's size). GGUF needs the vocabulary: `tokenizer` (null: an
// error saying so).
void write_model(const WeightSource& source, const ModelOutput& out, const data::Tokenizer* tokenizer = nullptr);

// `difftx convert`: the model directory `in` written as `out` says, streamed tensor by tensor,
// its tokenizer beside it (a Hugging Face directory gets tokenizer.json in place of difftx's
// tiktoken files); returns the model's config. A failure leaves no --out directory it made.
ModelConfig convert_model(const std::filesystem::path& in, const ModelOutput& out);

inline constexpr const char* kModelOutputUsage =
    "  --out DIR          the new model directory (must not exist, or be empty)\n"
    "  --to difftx|hf|gguf  difftx's own format (default), Hugging Face's LlamaForCausalLM\n"
    "                     (baseline) / DiffLlamaForCausalLM (diff; diff2 has no HF class), or\n"
    "                     llama.cpp's GGUF (baseline only; f32, bf16, f16, q8_0, q4_0, q4_k)\n"
    "  --dtype TYPE       how weights are stored (default f32): f32, bf16 or f16 for every\n"
    "                     tensor; q8_0, q4_0 or q4_k (difftx and gguf formats) for the matrices,\n"
    "                     with the embedding and LM head in q8_0 for the 4-bit types\n"
    "  --head-dtype TYPE  the embedding's and LM head's type instead (difftx and gguf formats)\n";

}  // namespace difftx::cli
