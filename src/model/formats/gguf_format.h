// llama.cpp's GGUF model file from a baseline model (docs/FORMATS.md "GGUF export"): the
// architecture "llama", weights in the storage plan's types (model/storage_plan.h: the same bytes
// `convert --dtype` writes for difftx) with q/k rows in llama.cpp's interleaved RoPE layout, and
// the vocabulary as tokenizer.ggml.* from the model directory's tokenizer, so that llama.cpp runs
// the very weights difftx runs. DIFF V1 and V2 have no llama.cpp architecture and are refused.
#pragma once
#include <filesystem>
#include <optional>

#include "data/tokenizer.h"
#include "model/model.h"
#include "model/weight_source.h"

namespace difftx::model {

inline constexpr const char* kGgufFile = "model.gguf";

// An error unless llama.cpp has an architecture for the model (baseline attention only).
void require_gguf_architecture(const ModelConfig& config);

// What a model directory says beside its tokenizer, which llama.cpp's converter writes too:
// the end-of-sequence and beginning ids (tokenizer_config.json's eos_token / bos_token, else
// config.json's first eos_token_id / bos_token_id) and the chat templates (the default and a
// named tool_use). Empty where the directory says nothing.
struct GgufChatMetadata {
  std::optional<int32_t> bos_id, eos_id;
  std::string chat_template, tool_use_template;
};
GgufChatMetadata gguf_chat_metadata(const std::filesystem::path& dir, const data::Tokenizer& tokenizer);

// Writes `path` atomically. `model` may be in any precision (widened, then converted); its
// vocab_size must cover the tokenizer's ids. `head`: the embedding's and output matrix's type
// instead of the storage plan's (e.g. llama.cpp's pure Q4_0 files, whose output is Q4_0 too).
void save_gguf_model(const Model& model, const data::Tokenizer& tokenizer, kernels::WeightType dtype,
                     const std::filesystem::path& path, std::optional<kernels::WeightType> head = std::nullopt,
                     const GgufChatMetadata& chat = {});
// The same from a source read one tensor at a time: the header first (every size follows from
// the storage plan), then each tensor converted and appended before the next is read.
void save_gguf_model(const WeightSource& source, const data::Tokenizer& tokenizer, kernels::WeightType dtype,
                     const std::filesystem::path& path, std::optional<kernels::WeightType> head = std::nullopt,
                     const GgufChatMetadata& chat = {});

// llama.cpp's pre-tokenizer name ("llama-bpe", "qwen2", "gpt-2") for a tokenizer's split pattern;
// an error naming the pattern when llama.cpp has none that splits the same way.
std::string gguf_pre_tokenizer(const data::Tokenizer& tokenizer);

}  // namespace difftx::model
