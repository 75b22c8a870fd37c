// --temperature, --top-k, --top-p, --min-p, --seed, the penalties, --logit-bias and --stop for
// the commands that sample (generate, chat).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cli/args.h"
#include "data/generation_defaults.h"
#include "infer/sampler.h"

// The options' help lines, for the commands' texts.
#define DIFFTX_SAMPLING_HELP                                                                                 \
  "  --min-p P             keep the tokens at least P times as likely as the likeliest (default 0: all)\n" \
  "  --presence-penalty X, --frequency-penalty X  OpenAI's penalties, each in [-2, 2] (default 0: off):\n"  \
  "                        a drawn token's logit less X once, and X for each time it was drawn\n"          \
  "  --repetition-penalty X  transformers' (0, 10] (default 1: off): the logit of a token of the prompt\n"  \
  "                        or the output divided by X where positive, multiplied where negative\n"  \
  "  --stop TEXT           end the text before TEXT where it appears (not printed); may repeat\n"

namespace difftx::cli {

// Each option as given, else generation_config.json's value (`defaults`: temperature, top_k, top_p,
// min_p, repetition_penalty), else `fallback`'s.
// --logit-bias ID=BIAS[,ID=BIAS...] (OpenAI's logit_bias): each id once, each bias in [-100, 100].
infer::SamplingOptions sampling_options(Args& args, const data::GenerationDefaults& defaults,
                                        infer::SamplingOptions fallback = {});

// --logit-bias against the vocabulary (known once the tokenizer is loaded): ids in [0, vocab),
// each once.
void check_logit_bias(const infer::SamplingOptions& s, int64_t vocab);

// --stop TEXT, repeatable: the stop strings, each non-empty, at most infer::kMaxStopStrings.
std::vector<std::string> stop_strings_option(Args& args);

}  // namespace difftx::cli
