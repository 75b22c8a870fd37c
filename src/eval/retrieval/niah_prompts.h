// Attention-allocation prompts (paper §3.4, Table 3; attention_allocation.h) made of NIAH tasks
// (niah.h), so that attention is measured on the very retrieval the models are trained and
// graded on. Each task has `needles` needles of which one is queried, placed at the prompt's
// depth. The row measured is the position that predicts the answer's first id (the end of the
// query " The magic number for KEY is"); the context is the haystack with its needles (the
// query block is neither answer nor noise); the answer span is the queried needle's value.
#pragma once
#include <cstdint>
#include <vector>

#include "data/tasks/niah.h"
#include "eval/attention_allocation.h"

namespace difftx::retrieval {

struct NiahPromptOptions {
  int64_t context = 256;                                 // ids per task
  std::vector<double> depths = {0, 0.25, 0.5, 0.75, 1};  // of the queried needle
  int64_t per_depth = 4;                                 // tasks per depth
  int64_t needles = 1;                                   // N; one of them is queried
  uint64_t seed = 1;
  int value_digits = kDefaultValueDigits;
};

// The prompt of one task: its tokens up to the measured row, at the task's depth.
eval::AllocationPrompt allocation_prompt(const NiahSample& sample, double depth);

// per_depth tasks at every depth; task i of every depth uses the i-th seed, as evaluate_niah
// does. Errors: no depths, per_depth < 1, a spec the generator rejects.
std::vector<eval::AllocationPrompt> niah_allocation_prompts(const NiahGenerator& generator,
                                                            const NiahPromptOptions& options);

}  // namespace difftx::retrieval
