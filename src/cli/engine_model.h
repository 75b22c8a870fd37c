// What the commands that run the engine (generate, chat, serve) load from --model DIR.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "backends/backend.h"
#include "chat/chat_template.h"
#include "model/model.h"

namespace difftx::cli {

// The weights as stored, on `device`, holding only the engine's copy of them.
model::Model load_engine_model(const std::filesystem::path& dir, backends::Backend& device);

// --chat-template FILE, else the directory's chat template; an error saying how to give one when
// there is neither.
chat::ChatTemplate required_chat_template(const std::filesystem::path& dir, const std::optional<std::string>& file);

}  // namespace difftx::cli
