// Needle prompts for the attention analysis (paper §3.4, Table 3): a haystack of val-split text
// with one sentence "The magic number for KEY is VALUE." at a chosen depth, then the question
// "What is the magic number for KEY? The magic number for KEY is". The query position is the
// last token, whose prediction is the value; the answer span is the value's tokens in the
// needle, the context is everything before the question.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

#include "data/tokenizer.h"
#include "eval/attention_allocation.h"

namespace difftx {

struct NeedlePromptOptions {
  int64_t length = 256;                                // tokens per prompt
  std::vector<double> depths = {0, 0.25, 0.5, 0.75, 1};  // needle start as a fraction of the haystack
  int64_t per_depth = 4;                               // prompts per depth, each on other haystack text
  uint64_t seed = 1;                                   // keys and values
};

// Haystacks are consecutive windows of `length` tokens of the val split of data_dir (the
// tokenizer must be the dataset's). Errors: depths outside [0, 1], a length too short for the
// needle and the question, a val split too short for one window.
std::vector<AllocationPrompt> make_needle_prompts(const data::Tokenizer& tokenizer, const std::filesystem::path& data_dir,
                                                  const NeedlePromptOptions& options);

}  // namespace difftx
