#include "cli/sampling_option.h"

namespace difftx::cli {

infer::SamplingOptions sampling_options(Args& args, const data::GenerationDefaults& defaults,
                                        infer::SamplingOptions s) {
  s.temperature = args.get_double("temperature", defaults.temperature.value_or(s.temperature), NumberRange{0, 1e300});
  s.top_k = args.get_int("top-k", defaults.top_k.value_or(s.top_k), kNonNegative);
  s.top_p = args.get_double("top-p", defaults.top_p.value_or(s.top_p), NumberRange{0, 1, true});
  s.seed = static_cast<uint64_t>(args.get_int("seed", static_cast<int64_t>(s.seed), kAnySeed));
  return s;
}

}  // namespace difftx::cli
