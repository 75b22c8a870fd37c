#include "cli/draft_option.h"

#include "core/error.h"

namespace difftx::cli {

DraftOption draft_option(Args& args) {
  DraftOption d;
  if (const auto draft = args.get("draft")) {
    DIFFTX_CHECK(!draft->empty(), "--draft must be ngram or a model directory");
    d.spec = *draft;
    d.mode = d.spec == "ngram" ? infer::DraftMode::ngram : infer::DraftMode::model;
  }
  d.tokens = args.get_int("draft-tokens", d.tokens, IntRange{1, infer::kMaxDraftTokens});
  return d;
}

}  // namespace difftx::cli
