#include "cli/sampling_option.h"

#include <algorithm>
#include <climits>
#include <string>

#include "core/error.h"
#include "infer/engine.h"

namespace difftx::cli {
namespace {

std::vector<std::pair<int32_t, float>> logit_bias_option(Args& args) {
  const auto text = args.get("logit-bias");
  if (!text) return {};
  std::vector<std::pair<int32_t, float>> bias;
  for (const std::string& item : comma_items(*text)) {
    const size_t eq = item.find('=');
    const auto id = eq == std::string::npos ? std::nullopt : parse_integer(item.substr(0, eq), IntRange{0, INT32_MAX});
    const auto b = eq == std::string::npos ? std::nullopt : parse_number(item.substr(eq + 1), NumberRange{-100, 100});
    DIFFTX_CHECK(id && b, "--logit-bias expects ID=BIAS[,ID=BIAS...] (token ids >= 0, biases in [-100, 100]), got '",
                 *text, "'", item == *text ? "" : concat(" (at '", item, "')"));
    bias.emplace_back(static_cast<int32_t>(*id), static_cast<float>(*b));
  }
  const std::string problem = infer::logit_bias_problem(bias, int64_t{INT32_MAX} + 1);  // the vocabulary comes later
  DIFFTX_CHECK(problem.empty(), "--logit-bias: ", problem);
  return bias;
}

}  // namespace

infer::SamplingOptions sampling_options(Args& args, const data::GenerationDefaults& defaults,
                                        infer::SamplingOptions s) {
  s.temperature = args.get_double("temperature", defaults.temperature.value_or(s.temperature), NumberRange{0, 1e300});
  s.top_k = args.get_int("top-k", defaults.top_k.value_or(s.top_k), kNonNegative);
  s.top_p = args.get_double("top-p", defaults.top_p.value_or(s.top_p), NumberRange{0, 1, true});
  s.min_p = args.get_double("min-p", defaults.min_p.value_or(s.min_p), NumberRange{0, 1});
  s.presence_penalty = args.get_double("presence-penalty", s.presence_penalty, NumberRange{-2, 2});
  s.frequency_penalty = args.get_double("frequency-penalty", s.frequency_penalty, NumberRange{-2, 2});
  s.repetition_penalty = args.get_double(
      "repetition-penalty", defaults.repetition_penalty.value_or(s.repetition_penalty), NumberRange{0, 10, true});
  s.seed = static_cast<uint64_t>(args.get_int("seed", static_cast<int64_t>(s.seed), kAnySeed));
  s.logit_bias = logit_bias_option(args);
  infer::check_sampling_options(s, OptionSpelling::flag);  // generation_config.json's values too
  return s;
}

void check_logit_bias(const infer::SamplingOptions& s, int64_t vocab) {
  const std::string problem = infer::logit_bias_problem(s.logit_bias, vocab);
  DIFFTX_CHECK(problem.empty(), "--logit-bias: ", problem);
}

std::vector<std::string> stop_strings_option(Args& args) {
  const std::vector<std::string> stops = args.list("stop");
  DIFFTX_CHECK(stops.size() <= infer::kMaxStopStrings, "--stop is given ", stops.size(), " times; at most ",
               infer::kMaxStopStrings, " stop strings");
  for (const std::string& stop : stops) DIFFTX_CHECK(!stop.empty(), "--stop needs a non-empty text");
  return stops;
}

}  // namespace difftx::cli
