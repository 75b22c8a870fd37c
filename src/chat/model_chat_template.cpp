#include "chat/model_chat_template.h"

#include "core/error.h"
#include "io/input_file.h"

namespace difftx::chat {

std::optional<ChatTemplate> load_chat_template(const std::filesystem::path& dir,
                                               const std::optional<std::string>& file) {
  if (!file) return ChatTemplate::from_model_dir(dir.string());
  ChatTemplate own;
  try {
    own = ChatTemplate::parse(io::read_whole_file(*file));
  } catch (const Error& e) {
    fail("--chat-template ", *file, ": ", e.what());
  }
  own.take_special_tokens_of(dir.string());
  return own;
}

}  // namespace difftx::chat
