#include "cli/draft_option.h"

#include "core/error.h"

namespace difftx::cli {

DraftOption draft_option(Args& args) {
  DraftOption d;
  if (const auto draft = args.get("draft")) {
    DIFFTX_CHECK(!draft->empty(), "--draft must be none, ngram or a model directory");
    d.spec = *draft;
  }
  if (args.get("draft-tokens")) d.count = args.get_int("draft-tokens", 0, IntRange{1, infer::kMaxDraftTokens});
  return d;
}

}  // namespace difftx::cli
