#include "eval/retrieval/niah_prompts.h"

#include "core/error.h"
#include "core/rng.h"

namespace difftx::retrieval {

eval::AllocationPrompt allocation_prompt(const NiahSample& sample, double depth) {
  const NiahQuery& query = sample.queries.front();
  const NiahNeedle& needle = sample.needles[query.needle];
  int64_t context_end = sample.haystack_tokens;  // haystack-with-needles comes first (niah.h)
  for (const NiahNeedle& n : sample.needles) context_end += n.needle.size();
  eval::AllocationPrompt p;
  p.tokens.assign(sample.tokens.begin(), sample.tokens.begin() + query.answer.begin);
  p.query_position = query.answer.begin - 1;
  p.context = {0, context_end};
  p.answer = {{needle.value_span.begin, needle.value_span.end}};
  p.depth = depth;
  return p;
}

std::vector<eval::AllocationPrompt> niah_allocation_prompts(const NiahGenerator& generator,
                                                            const NiahPromptOptions& o) {
  DIFFTX_CHECK(!o.depths.empty(), "NIAH prompts: no depths given");
  DIFFTX_CHECK(o.per_depth >= 1, "NIAH prompts: prompts per depth must be positive, got ", o.per_depth);
  std::vector<eval::AllocationPrompt> prompts;
  for (double depth : o.depths) {
    const NiahSpec spec{o.context, o.needles, 1, depth, o.value_digits};
    generator.validate(spec);
    for (int64_t i = 0; i < o.per_depth; ++i)
      prompts.push_back(allocation_prompt(generator.sample(spec, derive_rng(o.seed, {uint64_t(i)}).next_u64()), depth));
  }
  return prompts;
}

}  // namespace difftx::retrieval
