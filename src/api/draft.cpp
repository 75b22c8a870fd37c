#include "api/draft.h"

#include <filesystem>
#include <optional>

#include "core/error.h"
#include "infer/model_prompt.h"
#include "model/model_io.h"

namespace difftx::api {
namespace {

// The bytes of a token, or nullopt where the id is no token.
std::optional<std::string> token_bytes(const data::Tokenizer& t, int32_t id) {
  try {
    return t.decode({&id, 1});
  } catch (const Error&) {
    return std::nullopt;
  }
}

void check_same_vocabulary(const data::Tokenizer& draft, const data::Tokenizer& target, const std::string& where) {
  DIFFTX_CHECK(draft.vocab_size() == target.vocab_size(), where, ": its tokenizer has ", draft.vocab_size(),
               " tokens, the target's ", target.vocab_size(), ": the draft must share the target's vocabulary");
  for (int32_t id = 0; id < target.vocab_size(); ++id)
    DIFFTX_CHECK(token_bytes(draft, id) == token_bytes(target, id), where, ": token ", id,
                 " differs from the target's: the draft must share the target's vocabulary");
}

// What `load` returns; its errors start with `where` (the option and the draft's directory).
template <class Load>
auto named_load(const std::string& where, Load load) {
  try {
    return load();
  } catch (const Error& e) {
    fail(where, ": ", e.what());
  }
}

}  // namespace

Draft load_draft(const std::string& spec, std::optional<int64_t> tokens, backends::Backend& device,
                 const data::Tokenizer* target_tokenizer, const model::Model& target, OptionSpelling spelling) {
  Draft d;
  const std::string what = option_name("draft", spelling), count = option_name("draft_tokens", spelling);
  if (spec.empty() || spec == "none") {
    DIFFTX_CHECK(!tokens, count, " ", tokens.value_or(0), " is given without a draft: set ", what,
                 " to ngram or a model directory, or leave ", count, " out");
    return d;
  }
  d.tokens = tokens.value_or(infer::kDefaultDraftTokens);
  DIFFTX_CHECK(d.tokens >= 1 && d.tokens <= infer::kMaxDraftTokens, count, " ", d.tokens, " must be in [1, ",
               infer::kMaxDraftTokens, "]");
  if (spec == "ngram") {
    d.mode = infer::DraftMode::ngram;
    return d;
  }
  const std::filesystem::path dir = spec;
  const std::string where = what + " " + spec.substr(0, 256);
  DIFFTX_CHECK(std::filesystem::is_directory(dir), where, ": not none, ngram or a model directory");
  auto model = named_load(where, [&] {
    return std::make_shared<model::Model>(model::load_model_dir(dir, model::MatrixPrecision::as_stored));
  });
  model->config.require_decoder(concat("a draft model (", where, ")"));
  DIFFTX_CHECK(model->config.vocab_size == target.config.vocab_size, where, ": vocab_size ",
               model->config.vocab_size, " differs from the target's ", target.config.vocab_size,
               ": the draft must share the target's vocabulary");
  if (target_tokenizer)
    check_same_vocabulary(named_load(where, [&] { return infer::load_model_tokenizer(dir, std::nullopt, model->config); }),
                          *target_tokenizer, where);
  model->move_to(device);
  model->engine_matrices_only();
  d.mode = infer::DraftMode::model;
  d.model = std::move(model);
  return d;
}

}  // namespace difftx::api
