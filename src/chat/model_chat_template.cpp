#include "chat/model_chat_template.h"

#include "core/error.h"
#include "io/input_file.h"

namespace difftx::chat {

std::optional<ChatTemplate> load_chat_template(const std::filesystem::path& dir,
                                               const std::optional<std::string>& file) {
  std::optional<ChatTemplate> tmpl = ChatTemplate::from_model_dir(dir.string());
  if (!file) return tmpl;
  ChatTemplate own;
  try {
    own = ChatTemplate::parse(io::read_whole_file(*file));
  } catch (const Error& e) {
    fail("--chat-template ", *file, ": ", e.what());
  }
  if (tmpl) {
    own.bos_token = tmpl->bos_token;
    own.eos_token = tmpl->eos_token;
    own.special_tokens = tmpl->special_tokens;
  }
  return own;
}

}  // namespace difftx::chat
