// Writing a model directory: where and in which format and storage types (the options of
// `difftx convert` and `difftx init`, the Python module's convert and the C API's), the weights
// streamed tensor by tensor, and the conversion of one model directory into another.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/interrupt.h"
#include "core/option_name.h"
#include "data/tokenizer.h"
#include "io/safetensors.h"
#include "kernels/quant/weight_type.h"
#include "model/config.h"
#include "model/formats/gguf_format.h"
#include "model/weight_source.h"

namespace difftx::model {

struct ModelOutput {
  std::filesystem::path dir;
  std::string format;  // "difftx", "hf" or "gguf"
  kernels::WeightType dtype = kernels::WeightType::f32;     // the matrices' type (model/storage_plan.h)
  std::optional<kernels::WeightType> head_dtype;   // the embedding's and LM head's
  io::StoredFloat stored = io::StoredFloat::f32;  // how the F32 tensors are written (bf16/f16 follow dtype)
  OptionSpelling spelling = OptionSpelling::field;  // how errors name the options (model_output's)
};

// Checks the options (errors name them out, to, dtype and head_dtype as `spelling` writes them:
// the commands' --out, ...): dir must not exist, or be an empty directory (a model is never
// overwritten); format difftx, hf or gguf; dtype and head_dtype storage types the format holds.
ModelOutput model_output(const std::filesystem::path& dir, const std::string& format, const std::string& dtype,
                         const std::optional<std::string>& head_dtype, OptionSpelling spelling);

// Writes the weights `source` gives one tensor at a time, converted as `out` says (a few tensors
// in memory at once, whatever the model's size). GGUF needs the vocabulary: `tokenizer` (null: an
// error saying so), and takes `chat`, what the source directory says beside it
// (gguf_chat_metadata). A hybrid stack (Phi-4-mini-flash) in difftx's format keeps every vector
// F32 whatever the dtype, its matrices in storage_plan's types; as Phi4Flash, A_log, D and the
// lambdas stay F32 (phi4flash_keeps_f32).
void write_model(const WeightSource& source, const ModelOutput& out, const data::Tokenizer* tokenizer = nullptr,
                 const GgufChatMetadata& chat = {});

// Sets the token ids (bos_token_id, eos_token_id, pad_token_id) that `source` (the config.json a
// model came from) holds in the config.json written in `dir`: neither difftx's ModelConfig nor the
// formats' writers hold them, and transformers' config classes write them (eos_token_id an id or a
// list, pad_token_id where set). So generation stops at the same ids after a conversion or an
// init, and a round trip gives back the keys it read.
void carry_token_ids(const nlohmann::json& source, const std::filesystem::path& dir);

// `difftx convert`: the model directory `in` written as `out` says, streamed tensor by tensor,
// its tokenizer beside it (a Hugging Face directory gets tokenizer.json in place of difftx's
// tiktoken files); returns the model's config. `interrupt` is called before every tensor is read.
// A failure while the weights stream (an interrupt included) leaves no weights file and no --out
// directory it made.
ModelConfig convert_model(const std::filesystem::path& in, const ModelOutput& out, const Interrupt& interrupt = {});

}  // namespace difftx::model
