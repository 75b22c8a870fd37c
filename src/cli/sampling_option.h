// --temperature, --top-k, --top-p and --seed for the commands that sample (generate, chat).
#pragma once
#include "cli/args.h"
#include "data/generation_defaults.h"
#include "infer/sampler.h"

namespace difftx::cli {

// Each option as given, else generation_config.json's value (`defaults`), else `fallback`'s.
infer::SamplingOptions sampling_options(Args& args, const data::GenerationDefaults& defaults,
                                        infer::SamplingOptions fallback = {});

}  // namespace difftx::cli
