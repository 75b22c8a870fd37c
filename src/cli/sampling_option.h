// --temperature, --top-k, --top-p, --seed and --logit-bias for the commands that sample (generate, chat).
#pragma once
#include <cstdint>

#include "cli/args.h"
#include "data/generation_defaults.h"
#include "infer/sampler.h"

namespace difftx::cli {

// Each option as given, else generation_config.json's value (`defaults`), else `fallback`'s.
// --logit-bias ID=BIAS[,ID=BIAS...] (OpenAI's logit_bias): each id once, each bias in [-100, 100].
infer::SamplingOptions sampling_options(Args& args, const data::GenerationDefaults& defaults,
                                        infer::SamplingOptions fallback = {});

// --logit-bias against the vocabulary (known once the tokenizer is loaded): ids in [0, vocab),
// each once.
void check_logit_bias(const infer::SamplingOptions& s, int64_t vocab);

}  // namespace difftx::cli
