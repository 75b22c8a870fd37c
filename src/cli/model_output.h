// The options of commands that write a model directory (convert, init): --out, --to, --dtype,
// --head-dtype, read into the library's ModelOutput (model/model_output.h).
#pragma once
#include "cli/args.h"
#include "model/model_output.h"

namespace difftx::cli {

// Reads --out (required), --to, --dtype and --head-dtype; model_output() checks them.
model::ModelOutput model_output_options(Args& args);

inline constexpr const char* kModelOutputUsage =
    "  --out DIR          the new model directory (must not exist, or be empty)\n"
    "  --to difftx|hf|gguf  difftx's own format (default), Hugging Face's LlamaForCausalLM\n"
    "                     (baseline) / DiffLlamaForCausalLM (diff; diff2 has no HF class) /\n"
    "                     MotifForCausalLM / Phi4FlashForCausalLM (a hybrid), or llama.cpp's\n"
    "                     GGUF (baseline only; f32, bf16, f16, q8_0, q4_0, q4_k)\n"
    "  --dtype TYPE       how weights are stored (default f32): f32, bf16 or f16 for every\n"
    "                     tensor; q8_0, q4_0 or q4_k (difftx and gguf formats) for the matrices,\n"
    "                     with the embedding and LM head in q8_0 for the 4-bit types (a hybrid's\n"
    "                     vectors stay f32 in difftx's format, in any type)\n"
    "  --head-dtype TYPE  the embedding's and LM head's type instead (difftx and gguf formats)\n";

}  // namespace difftx::cli
