#include "cli/draft_option.h"

#include <string>

#include "core/error.h"
#include "infer/model_prompt.h"
#include "model/model_io.h"

namespace difftx::cli {
namespace {

// The bytes of a token, or nullopt where the id is no token.
std::optional<std::string> token_bytes(const data::Tokenizer& t, int32_t id) {
  try {
    return t.decode({&id, 1});
  } catch (const Error&) {
    return std::nullopt;
  }
}

void check_same_vocabulary(const data::Tokenizer& draft, const data::Tokenizer& target, const std::string& dir) {
  DIFFTX_CHECK(draft.vocab_size() == target.vocab_size(), "--draft ", dir, ": its tokenizer has ", draft.vocab_size(),
               " tokens, the target's ", target.vocab_size(), ": the draft must share the target's vocabulary");
  for (int32_t id = 0; id < target.vocab_size(); ++id)
    DIFFTX_CHECK(token_bytes(draft, id) == token_bytes(target, id), "--draft ", dir, ": token ", id,
                 " differs from the target's: the draft must share the target's vocabulary");
}

}  // namespace

DraftOption draft_option(Args& args) {
  DraftOption d;
  if (const auto draft = args.get("draft")) {
    DIFFTX_CHECK(!draft->empty(), "--draft must be ngram or a model directory");
    if (*draft == "ngram") d.mode = DraftMode::ngram;
    else d.mode = DraftMode::model, d.dir = *draft;
  }
  d.tokens = args.get_int("draft-tokens", d.tokens, IntRange{1, kMaxDraftTokens});
  return d;
}

void DraftOption::load(backends::Backend& device, const data::Tokenizer* target_tokenizer, const Model& target) {
  if (!dir) return;
  const std::string where = dir->string();
  DIFFTX_CHECK(std::filesystem::is_directory(*dir), "--draft ", where, ": not ngram and not a model directory");
  model = std::make_unique<Model>(load_model_dir(*dir, MatrixPrecision::as_stored));
  model->config.require_decoder("a draft model (--draft)");
  DIFFTX_CHECK(model->config.vocab_size == target.config.vocab_size, "--draft ", where, ": vocab_size ",
               model->config.vocab_size, " differs from the target's ", target.config.vocab_size,
               ": the draft must share the target's vocabulary");
  if (target_tokenizer)
    check_same_vocabulary(load_model_tokenizer(*dir, std::nullopt, model->config), *target_tokenizer, where);
  model->move_to(device);
  model->engine_matrices_only();
}

void DraftOption::apply(EngineOptions& o) const {
  o.draft = mode;
  o.draft_tokens = tokens;
  o.draft_model = model.get();
}

}  // namespace difftx::cli
