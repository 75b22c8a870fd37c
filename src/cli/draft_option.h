// --draft none|ngram|DIR and --draft-tokens K: speculative decoding (infer/drafter.h, api/draft.h) for
// generate, serve and the inference benches.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "api/draft.h"
#include "cli/args.h"

namespace difftx::cli {

#define DIFFTX_DRAFT_HELP                                                                                       \
  "  --draft none|ngram|DIR  speculative decoding: ngram drafts by prompt lookup (the continuation of the\n"   \
  "                        longest n-gram match in the prompt and output); DIR is a smaller model with the\n"  \
  "                        same vocabulary; none (the default) drafts nothing. The output is the same as\n"    \
  "                        without (greedy: bit-identical)\n"                                                   \
  "  --draft-tokens K      tokens drafted per step, 1 to 64 (default 6; only with --draft ngram|DIR)\n"

struct DraftOption : api::Draft {
  std::string spec;             // --draft's value: empty, none, ngram or DIR
  std::optional<int64_t> count;  // --draft-tokens, where given

  // Sets the draft (api::load_draft): with --draft DIR, loads the draft model onto `device` and
  // checks that its tokenizer is the target's, token by token (an error naming the first
  // difference). A hybrid model is an error, and so is --draft-tokens without a draft.
  void load(backends::Backend& device, const data::Tokenizer* target_tokenizer, const model::Model& target) {
    static_cast<api::Draft&>(*this) =
        api::load_draft(spec, count, device, target_tokenizer, target, OptionSpelling::flag);
  }
};

// Reads --draft and --draft-tokens.
DraftOption draft_option(Args& args);

}  // namespace difftx::cli
