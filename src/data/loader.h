// Batches for the trainer from a prepared dataset (dataset.h): windows of T+1 tokens from the
// memory-mapped shards of one split, inputs = window[0..T), targets = window[1..T].
//
// Random sampling (training) is defined on GLOBAL batches: optimizer step s reads rows
// g = 0 .. G-1, G = world_size x micro_batches x batch, and the window of row g starts at a
// position that is a pure function of (seed, s, g) over the whole split. A process reads its
// own rows: micro-batch j of rank r is rows [(j world_size + r) batch, + batch). So the rows of
// a step are the same whatever the split into ranks, micro-batches and accumulation (2 ranks of
// B rows read exactly what 1 rank of 2B rows reads), no two ranks read the same row, and the
// data position is the step alone, which is what lets a run resume on another number of ranks.
// Sequential sampling (evaluation): the stream is cut into consecutive windows (window k covers
// tokens [kT, kT + T], so every token but the first is a target exactly once); rank r takes its
// own contiguous run of windows and reads them in order.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include "data/split_reader.h"

namespace difftx::data {

// by_split: random for "train", sequential for any other split.
enum class Sampling { by_split, random, sequential };

// Targets of the rows a final sequential batch cannot fill (the model's ignore id).
inline constexpr int32_t kIgnoreTarget = -1;

// Most tokens one micro-batch (batch x seq_len) may hold: its buffers are allocated from the product.
inline constexpr int64_t kMaxBatchTokens = int64_t{1} << 28;

struct LoaderOptions {
  int64_t batch = 1;    // rows per micro-batch on this rank
  int64_t seq_len = 1;  // T: a row is a window of T+1 tokens
  uint64_t seed = 0;    // random sampling only
  Sampling sampling = Sampling::by_split;
  // Data parallelism (above): this process's share of every global batch.
  int rank = 0;
  int world_size = 1;
  int64_t micro_batches = 1;  // random: micro-batches each rank draws per optimizer step
  int64_t max_windows = 0;    // sequential: only the split's first max_windows windows (0: all)
};

// Where a loader is in its split; saved with checkpoints.
struct LoaderState {
  int64_t step = 0;      // random: optimizer steps (global batches) drawn so far
  int64_t position = 0;  // sequential: windows this rank has read since the last rewind
  nlohmann::json to_json() const;
  // Errors name the key that is missing or not a non-negative integer.
  static LoaderState from_json(const nlohmann::json& j);
  bool operator==(const LoaderState&) const = default;
};
// For nlohmann::json's implicit conversions (json{{"data", loader.state()}}).
void to_json(nlohmann::json& j, const LoaderState& state);
void from_json(const nlohmann::json& j, LoaderState& state);

class TokenLoader {
 public:
  // Errors: missing directory or split, truncated shard, ids outside the vocabulary, and a
  // split shorter than T+1 tokens (or, sequential, with no window for this rank), naming the
  // shard files.
  TokenLoader(const std::filesystem::path& dir, const std::string& split, const LoaderOptions& options);

  // Fills inputs[batch*seq_len] and targets[batch*seq_len] (row-major, one window per row)
  // and advances. Returns the rows filled: always `batch` when random (this rank's next
  // micro-batch); when sequential, fewer for the last batch (the rest get input 0 and target
  // kIgnoreTarget) and 0 once this rank's windows are used up.
  int64_t next(int32_t* inputs, int32_t* targets);

  // Random sampling: where the window of global row `row` of `step` starts in the split's
  // token stream.
  int64_t window_start(int64_t step, int64_t row) const;
  // Random sampling: the global row (within its step) that row b of this rank's micro-batch
  // `micro` reads.
  int64_t global_row(int64_t micro, int64_t b) const { return (micro * o_.world_size + o_.rank) * o_.batch + b; }

  // Random: only between optimizer steps (after a multiple of micro_batches calls to next).
  LoaderState state() const;
  void restore(const LoaderState& state);
  void restore(const nlohmann::json& state) { restore(LoaderState::from_json(state)); }
  void rewind() { restore(LoaderState{}); }

  int64_t vocab_size() const { return reader_.dataset().vocab_size; }
  int64_t batch() const { return o_.batch; }
  int64_t seq_len() const { return o_.seq_len; }
  int64_t tokens() const { return reader_.tokens(); }  // in the whole split
  // Sequential: this rank's windows; random: the distinct window starts in the split.
  int64_t windows() const;
  bool is_random() const { return random_; }
  const DatasetInfo& dataset() const { return reader_.dataset(); }

 private:
  void read_window(int64_t start, int32_t* inputs, int32_t* targets) const;

  SplitReader reader_;
  LoaderOptions o_;
  bool random_;
  int64_t part_begin_ = 0, part_end_ = 0;  // sequential: this rank's window indices
  LoaderState state_;
  int64_t micro_ = 0;  // random: micro-batches drawn of the current step
};

// A split read in order from its first window, `batch` windows of seq_len + 1 tokens at a time:
// what evaluation reads. Errors: batch or seq_len not positive (named as the CLI's --micro-batch
// and --seq-len), a missing directory, and the loader's own.
TokenLoader sequential_loader(const std::filesystem::path& dir, const std::string& split, int64_t batch,
                              int64_t seq_len);

}  // namespace difftx::data
