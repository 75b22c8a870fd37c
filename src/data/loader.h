// Batches for the trainer from a prepared dataset (dataset.h): windows of T+1 tokens from the
// memory-mapped shards of one split, inputs = window[0..T), targets = window[1..T].
//
// Random sampling (training): the window of batch row b at step s on rank r starts at a
// position that is a pure function of (seed, s, r, b), so resuming needs only the step. The
// split's token stream is cut into world_size contiguous parts and rank r draws only inside
// its own part, so no window is shared between ranks.
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

// Where a loader is in its split; saved with checkpoints.
struct LoaderState {
  int64_t step = 0;      // random: batches drawn so far
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
  // split (or this rank's part of it) shorter than T+1 tokens, naming the shard files.
  TokenLoader(const std::filesystem::path& dir, const std::string& split, int64_t batch,
              int64_t seq_len, uint64_t seed, int rank = 0, int world_size = 1,
              Sampling sampling = Sampling::by_split);

  // Fills inputs[batch*seq_len] and targets[batch*seq_len] (row-major, one window per row)
  // and advances. Returns the rows filled: always `batch` when random; when sequential, fewer
  // for the last batch (the rest get input 0 and target kIgnoreTarget) and 0 once this rank's
  // windows are used up.
  int64_t next(int32_t* inputs, int32_t* targets);

  // Random sampling: where the window of (step, row) starts in the split's token stream.
  int64_t window_start(int64_t step, int64_t row) const;

  LoaderState state() const { return state_; }
  void restore(const LoaderState& state);
  void restore(const nlohmann::json& state) { restore(LoaderState::from_json(state)); }
  void rewind() { state_ = LoaderState{}; }

  int64_t vocab_size() const { return reader_.dataset().vocab_size; }
  int64_t tokens() const { return reader_.tokens(); }  // in the whole split
  // Sequential: this rank's windows; random: the distinct window starts in this rank's part.
  int64_t windows() const;
  bool is_random() const { return random_; }
  const DatasetInfo& dataset() const { return reader_.dataset(); }

 private:
  void read_window(int64_t start, int32_t* inputs, int32_t* targets) const;

  SplitReader reader_;
  int64_t batch_, seq_len_;
  uint64_t seed_;
  int rank_, world_size_;
  bool random_;
  int64_t part_begin_ = 0, part_end_ = 0;  // random: tokens; sequential: window indices
  LoaderState state_;
};

}  // namespace difftx::data
