// Speculative decoding as the CLI, the Python module and the C API name it (infer/drafter.h):
// "none", "ngram" (prompt lookup) or the directory of a smaller model with the target's
// vocabulary, and the most tokens drafted per step.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "backends/backend.h"
#include "core/option_name.h"
#include "data/tokenizer.h"
#include "infer/engine.h"
#include "model/model.h"

namespace difftx::api {

struct Draft {
  infer::DraftMode mode = infer::DraftMode::none;
  int64_t tokens = infer::kDefaultDraftTokens;
  std::shared_ptr<const model::Model> model;  // DraftMode::model's, on the target's device

  // Sets the default draft of an engine (EngineOptions) or a generate() call (GenerateOptions):
  // draft, draft_tokens, draft_model. They must not outlive this Draft's model.
  template <typename Options>
  void apply(Options& o) const {
    o.draft = mode;
    o.draft_tokens = tokens;
    o.draft_model = model.get();
  }
};

// `spec` "" or "none" is no draft, "ngram" prompt lookup, anything else a model directory:
// loaded onto `device` with its matrices as stored, and checked to be docs/SPEC.md's decoder with
// the target's vocab_size and, where the target has a tokenizer, the same bytes for every token
// id. `tokens`: the most tokens drafted per step, in [1, kMaxDraftTokens]; nullopt:
// kDefaultDraftTokens; given without a draft, an error (nothing would be drafted). Errors name the
// options "draft" and "draft_tokens" as `spelling` writes them (the CLI's flags, the C API's
// fields, Python's keywords), and a model directory's errors name the option and the directory.
Draft load_draft(const std::string& spec, std::optional<int64_t> tokens, backends::Backend& device,
                 const data::Tokenizer* target_tokenizer, const model::Model& target, OptionSpelling spelling);

}  // namespace difftx::api
