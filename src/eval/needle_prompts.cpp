#include "eval/needle_prompts.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "core/rng.h"
#include "data/loader.h"

namespace difftx {
namespace {

const char* const kKeys[] = {"apple",  "river",  "candle", "falcon", "marble", "violet", "harbor", "cactus",
                             "meadow", "lantern", "copper", "willow", "summit", "orchid", "garnet", "thistle"};

}  // namespace

std::vector<AllocationPrompt> make_needle_prompts(const data::Tokenizer& tokenizer, const std::filesystem::path& data_dir,
                                                  const NeedlePromptOptions& o) {
  DIFFTX_CHECK(o.per_depth > 0, "needle prompts: prompts per depth must be positive, got ", o.per_depth);
  DIFFTX_CHECK(!o.depths.empty(), "needle prompts: no depths given");
  for (double d : o.depths) DIFFTX_CHECK(d >= 0 && d <= 1, "needle prompts: depth ", d, " is not in [0, 1]");
  data::TokenLoader val(data_dir, "val", 1, o.length, 0, 0, 1, data::Sampling::sequential);
  const int64_t windows = val.windows();
  std::vector<int32_t> window(o.length), unused(o.length);

  Rng rng(o.seed);
  std::vector<AllocationPrompt> prompts;
  for (double depth : o.depths)
    for (int64_t i = 0; i < o.per_depth; ++i) {
      if (static_cast<int64_t>(prompts.size()) % windows == 0) val.rewind();  // reuse text when the split is short
      val.next(window.data(), unused.data());
      const std::string key = kKeys[rng.below(std::size(kKeys))];
      const std::string value = concat(" ", 10000 + rng.below(90000));
      const auto prefix = tokenizer.encode(" The magic number for " + key + " is");
      const auto answer = tokenizer.encode(value);
      const auto suffix = tokenizer.encode(".");
      const auto question = tokenizer.encode("\nWhat is the magic number for " + key + "? The magic number for " + key + " is");
      const int64_t needle = static_cast<int64_t>(prefix.size() + answer.size() + suffix.size());
      const int64_t haystack = o.length - needle - static_cast<int64_t>(question.size());
      DIFFTX_CHECK(haystack >= 1, "needle prompts: --context ", o.length, " leaves no room for text around the ",
                   needle, "-token needle and the ", question.size(), "-token question");
      const int64_t at = std::llround(depth * haystack);

      AllocationPrompt p;
      p.tokens.assign(window.begin(), window.begin() + at);
      p.tokens.insert(p.tokens.end(), prefix.begin(), prefix.end());
      const int64_t answer_begin = static_cast<int64_t>(p.tokens.size());
      p.tokens.insert(p.tokens.end(), answer.begin(), answer.end());
      p.tokens.insert(p.tokens.end(), suffix.begin(), suffix.end());
      p.tokens.insert(p.tokens.end(), window.begin() + at, window.begin() + haystack);
      p.context = {0, static_cast<int64_t>(p.tokens.size())};
      p.tokens.insert(p.tokens.end(), question.begin(), question.end());
      p.answer = {{answer_begin, answer_begin + static_cast<int64_t>(answer.size())}};
      p.query_position = static_cast<int64_t>(p.tokens.size()) - 1;
      p.depth = depth;
      prompts.push_back(std::move(p));
    }
  return prompts;
}

}  // namespace difftx
