#include "api/loaded_model.h"

#include "api/draft.h"
#include "api/thread_scope.h"
#include "backends/backend.h"
#include "core/error.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"
#include "infer/model_prompt.h"
#include "kernels/attention/decode_attention.h"
#include "model/forward_logits.h"

namespace difftx::api {

namespace fs = std::filesystem;

const data::Tokenizer& LoadedModel::require_tokenizer() const {
  // Said of the directory as it was at load: a tokenizer written there since is not this model's.
  DIFFTX_CHECK(tokenizer, dir.string(), ": no tokenizer in the model directory when the model was loaded (",
               data::kTokenizerFilesNamed, ")");
  return *tokenizer;
}

void LoadedModel::require_cpu(const char* what) const {
  DIFFTX_CHECK(model.backend->host_memory(), what, " runs on the CPU; this model is on ", device, " (",
               model.backend->info().name, "): load it with device \"cpu\"");
}

const chat::ChatTemplate& LoadedModel::require_chat_template() const {
  DIFFTX_CHECK(chat_template.has_value(), chat_template_error);
  return *chat_template;
}

std::shared_ptr<LoadedModel> load_model(const fs::path& dir, const LoadOptions& options) {
  ThreadScope scope(options.threads);
  backends::Backend& backend = backends::open_backend(options.device);
  auto m = std::make_shared<LoadedModel>(dir, model::load_model_dir(dir, options.precision));
  m->model.move_to(backend);
  m->device = options.device;
  (void)kernels::parse_kv_storage(options.kv_dtype);  // an error naming the choices
  m->kv_dtype = options.kv_dtype;
  m->threads = options.threads;
  m->defaults = data::read_generation_defaults(dir);
  if (data::has_tokenizer_files(dir))
    m->tokenizer = std::make_shared<data::Tokenizer>(infer::load_model_tokenizer(dir, std::nullopt, m->model.config));
  try {
    m->chat_template = chat::ChatTemplate::from_model_dir(dir.string());
    if (!m->chat_template)
      m->chat_template_error = dir.string() + " has no chat template (tokenizer_config.json's chat_template or "
                                              "chat_template.jinja)";
  } catch (const Error& e) {
    m->chat_template_error = dir.string() + ": its chat template: " + e.what();
  }
  const std::optional<int64_t> draft_tokens =
      options.draft_tokens != 0 ? std::optional<int64_t>(options.draft_tokens) : std::nullopt;
  m->draft = std::make_shared<const Draft>(
      load_draft(options.draft, draft_tokens, backend, m->tokenizer.get(), m->model, OptionSpelling::field));
  return m;
}

std::vector<int32_t> encode_text(const data::Tokenizer& t, std::string_view text, bool add_special) {
  std::vector<int32_t> ids = t.encode(text, t.tiktoken_family() ? data::Specials::as_text : data::Specials::allowed);
  return add_special ? t.add_template(ids) : ids;
}

void check_sequence(std::span<const int32_t> ids, const model::ModelConfig& c) {
  DIFFTX_CHECK(!ids.empty(), "ids: no token ids given");
  DIFFTX_CHECK(static_cast<int64_t>(ids.size()) <= c.max_position_embeddings, "ids: ", ids.size(),
               " tokens exceed max_position_embeddings ", c.max_position_embeddings);
  for (size_t i = 0; i < ids.size(); ++i)
    DIFFTX_CHECK(ids[i] >= 0 && ids[i] < c.vocab_size, "ids: id ", ids[i], " at position ", i,
                 " is outside the vocabulary [0, ", c.vocab_size, ")");
}

void sequence_logits(const LoadedModel& m, std::span<const int32_t> ids, float* out) {
  check_sequence(ids, m.model.config);
  ThreadScope scope(m.threads);
  model::forward_logits(m.model, ids, out);
}

}  // namespace difftx::api
