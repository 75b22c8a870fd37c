// A model's chat template: a template file given instead (--chat-template FILE), with the model's
// special tokens where it has them, else the model directory's own.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "chat/chat_template.h"

namespace difftx::chat {

// std::nullopt when there is neither; a file that does not parse is an error naming it.
std::optional<ChatTemplate> load_chat_template(const std::filesystem::path& dir,
                                               const std::optional<std::string>& file);

}  // namespace difftx::chat
