// Multi-needle retrieval accuracy (paper Table 2, Fig. 5) over a grid of context lengths,
// needle counts N, queried counts R and depths: each cell runs `samples` tasks (niah.h) through
// a forward pass and counts a queried needle as retrieved when greedy decoding gives exactly its
// value (greedy_match.h; the earlier answers of the same task are in the prompt, as they would
// be had the model answered them right). Accuracy = retrieved / queried needles of the cell.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/tasks/niah.h"
#include "eval/logits_forward.h"
#include "results/results.h"

namespace difftx::retrieval {

struct NiahGrid {
  std::vector<int64_t> contexts = {256};
  std::vector<int64_t> needles = {1, 2, 4, 6};
  std::vector<int64_t> queried = {1, 2};  // pairs with R > N are skipped
  std::vector<double> depths = {0, 0.25, 0.5, 0.75, 1};
  int64_t samples = 20;  // tasks per cell; task i of every cell uses the i-th seed
  uint64_t seed = 1;
  int value_digits = kDefaultValueDigits;
};

struct NiahCell {
  int64_t context = 0, needles = 0, queried = 0;
  double depth = 0;
  int64_t samples = 0;    // tasks run
  int64_t asked = 0;      // queried needles over those tasks
  int64_t retrieved = 0;  // of them, answered exactly
  double accuracy() const { return asked ? static_cast<double>(retrieved) / asked : 0.0; }
};

struct NiahResult {
  NiahGrid grid;
  std::string data_dir, split;
  std::vector<NiahCell> cells;  // by context, then N, then R, then depth
  double seconds = 0;
};

struct NiahProgress {
  int64_t tasks_done, tasks_total;
  double seconds;
};

// Errors before any forward: an empty grid, no (N, R) pair with R <= N, a cell the generator
// rejects (NiahGenerator::validate), a context past forward.max_tokens, samples < 1.
NiahResult evaluate_niah(const eval::LogitsForward& forward, const NiahGenerator& generator, const NiahGrid& grid,
                         const std::function<void(const NiahProgress&)>& progress = {});

// The "niah" object of the results schema (results/results.h): the cells with their accuracy,
// the pooled mean accuracy (retrieved over queried needles of all cells), and what the run used
// (value digits, seed, data, split, templates, accuracy definition).
results::NiahResults niah_results(const NiahResult& result);

// A readable table: one line per (context, N, R), a column per depth, and the mean.
std::string niah_table(const NiahResult& result);

}  // namespace difftx::retrieval
