// Retrieval tasks mixed into language-model training (`difftx train --mix niah=F,mqar=G`): a
// fraction of the rows of every batch is replaced by generated task rows of exactly seq_len
// tokens, so that a small model learns retrieval it would not pick up from text alone.
//
// Which rows: row g of optimizer step s (g counts the rows of the step's whole batch) is a task
// row by u = frac(g phi + h(seed, s)), phi the golden ratio and h a hash: NIAH when u < F, MQAR
// when F <= u < F + G, text otherwise. A golden-ratio (Weyl) sequence spreads each kind evenly,
// so every batch holds its fraction to within about a row (a coin per row would hold it only on
// average), and the offset h moves the task rows around the batch from step to step. A task
// row's content comes from derive_rng(seed, {s, g}). Everything is a pure function of
// (seed, s, g): resuming needs nothing saved, and under data parallelism g is the row's index
// in the global batch, so the rows do not depend on how the batch is split.
//
// NIAH rows (niah.h): a task of seq_len + 1 tokens, inputs its first T, targets its last T;
// haystack from the train split; N uniform in [1, max_needles] (max_needles: the largest N <= 8
// whose needles and queries take at most half the row), R uniform in [1, min(N, 4)], depth
// uniform in [0, 1], kDefaultValueDigits-digit values. Targets: the answers' ids only (data::kIgnoreTarget
// elsewhere). The text rows teach language; counting the haystack here too put 1-4 answers among
// 128+ targets, and no model learnt NIAH from such rows (docs/EXPERIMENTS.md), while with the
// answers alone a 1.5M-parameter model retrieves within a thousand steps.
// MQAR rows (mqar.h): episodes back to back, P uniform in [min(2, Pmax), Pmax], Pmax =
// min(32, T / 4), Q = P, the last episode cut at the row's end. Targets: the answers only
// (data::kIgnoreTarget elsewhere): every other id of an episode is a uniformly random token whose loss is
// a constant (the log of its pool) that would swamp the answers and teach nothing.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "data/split_reader.h"
#include "data/tasks/mixture_spec.h"
#include "data/tasks/mqar.h"
#include "data/tasks/niah.h"
#include "data/tokenizer.h"

namespace difftx::retrieval {

enum class RowKind { text, niah, mqar };

class TaskMixture {
 public:
  // Reads the tokenizer and the train split of data_dir. Errors: a seq_len too short for a
  // NIAH row (when F > 0) or an MQAR episode (when G > 0), naming the options as `spelling` does.
  TaskMixture(const MixtureSpec& spec, const std::filesystem::path& data_dir, int64_t seq_len, uint64_t seed,
              OptionSpelling spelling);

  RowKind kind(int64_t step, int64_t row) const;
  // Overwrites the task rows among rows [first_row, first_row + rows) of `step`, given as the
  // loader filled them: inputs and targets [rows, seq_len], row-major.
  void apply(int64_t step, int64_t first_row, int64_t rows, int32_t* inputs, int32_t* targets) const;
  // The row a task row of this kind gets at (step, row), whatever kind() says.
  void fill(RowKind kind, int64_t step, int64_t row, int32_t* inputs, int32_t* targets) const;

  // One line for the training log: fractions and the task ranges.
  std::string describe() const;
  int64_t max_needles() const { return max_needles_; }
  int64_t max_pairs() const { return max_pairs_; }

 private:
  MixtureSpec spec_;
  int64_t seq_len_;
  uint64_t seed_;
  data::SplitReader train_;  // first: its errors name a missing or unprepared data directory
  data::Tokenizer tokenizer_;
  NiahGenerator niah_;
  MqarVocabulary mqar_;
  int64_t max_needles_ = 0, max_queried_ = 4, max_pairs_ = 0;
};

}  // namespace difftx::retrieval
