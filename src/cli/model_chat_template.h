// The chat template for the commands that chat (serve, generate --chat): --chat-template FILE
// (with the model's special tokens, where it has them), else the model directory's own.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "chat/chat_template.h"

namespace difftx::cli {

// std::nullopt when there is neither; a file that does not parse is an error naming it.
std::optional<chat::ChatTemplate> load_chat_template(const std::filesystem::path& dir,
                                                     const std::optional<std::string>& file);

}  // namespace difftx::cli
