// What the commands that run the engine (generate, chat, serve) load from --model DIR.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "backends/backend.h"
#include "chat/chat_template.h"
#include "cli/args.h"
#include "kernels/attention/decode_attention.h"
#include "model/model.h"

namespace difftx::cli {

// The options that name what to load: --model DIR (required), --chat-template FILE, --tokenizer NAME.
struct ModelOptions {
  std::filesystem::path dir;
  std::optional<std::string> chat_template;
  std::optional<std::string> tokenizer;
};
ModelOptions model_options(Args& args);

// --kv-dtype f32|bf16|int8: how the KV cache stores keys and values (default bf16).
kernels::KvStorage kv_dtype_option(Args& args);

// The weights as stored, on `device`, holding only the engine's copy of them.
model::Model load_engine_model(const std::filesystem::path& dir, backends::Backend& device);

// --chat-template FILE, else the directory's chat template; an error saying how to give one when
// there is neither.
chat::ChatTemplate required_chat_template(const std::filesystem::path& dir, const std::optional<std::string>& file);

}  // namespace difftx::cli
