#include "cli/engine_model.h"

#include "chat/model_chat_template.h"
#include "core/error.h"
#include "model/model_io.h"

namespace difftx::cli {

ModelOptions model_options(Args& args) {
  ModelOptions m;
  m.dir = args.require("model");
  m.chat_template = args.get("chat-template");
  m.tokenizer = args.get("tokenizer");
  return m;
}

kernels::KvStorage kv_dtype_option(Args& args) { return kernels::parse_kv_storage(args.get("kv-dtype", "bf16")); }

model::Model load_engine_model(const std::filesystem::path& dir, backends::Backend& device) {
  model::Model model = model::load_model_dir(dir, model::MatrixPrecision::as_stored);
  model.move_to(device);
  model.engine_matrices_only();
  return model;
}

chat::ChatTemplate required_chat_template(const std::filesystem::path& dir, const std::optional<std::string>& file) {
  std::optional<chat::ChatTemplate> tmpl = chat::load_chat_template(dir, file);
  DIFFTX_CHECK(tmpl.has_value(), dir.string(),
               " has no chat template (tokenizer_config.json's chat_template or chat_template.jinja); give one with "
               "--chat-template FILE");
  return std::move(*tmpl);
}

}  // namespace difftx::cli
