#include "data/loader.h"

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"
#include "core/rng.h"
#include "io/input_file.h"

namespace difftx::data {
namespace {

int64_t non_negative(const nlohmann::json& j, const char* key) {
  DIFFTX_CHECK(j.is_object() && j.contains(key) && j[key].is_number_integer() &&
                   j[key].get<int64_t>() >= 0,
               "loader state ", j.dump(), ": key \"", key,
               "\" is missing or not a non-negative integer");
  return j[key].get<int64_t>();
}

}  // namespace

nlohmann::json LoaderState::to_json() const { return {{"step", step}, {"position", position}}; }

LoaderState LoaderState::from_json(const nlohmann::json& j) {
  return LoaderState{non_negative(j, "step"), non_negative(j, "position")};
}

void to_json(nlohmann::json& j, const LoaderState& state) { j = state.to_json(); }
void from_json(const nlohmann::json& j, LoaderState& state) { state = LoaderState::from_json(j); }

TokenLoader sequential_loader(const std::filesystem::path& dir, const std::string& split, int64_t batch,
                              int64_t seq_len) {
  DIFFTX_CHECK(batch > 0 && seq_len > 0, "--seq-len ", seq_len, " and --micro-batch ", batch, " must be positive");
  io::require_directory(dir, "data directory", " (make one with difftx prepare)");
  return TokenLoader(dir, split, {.batch = batch, .seq_len = seq_len, .sampling = Sampling::sequential});
}

TokenLoader::TokenLoader(const std::filesystem::path& dir, const std::string& split,
                         const LoaderOptions& options)
    : reader_(dir, split),
      o_(options),
      random_(o_.sampling == Sampling::random ||
              (o_.sampling == Sampling::by_split && split == "train")) {
  DIFFTX_CHECK(o_.batch > 0 && o_.seq_len > 0, "loader: batch ", o_.batch, " and seq_len ", o_.seq_len,
               " must be positive");
  DIFFTX_CHECK(product_at_most({o_.batch, o_.seq_len}, kMaxBatchTokens).has_value(), "loader: batch ", o_.batch,
               " x seq_len ", o_.seq_len, " exceeds the ", kMaxBatchTokens, " tokens one micro-batch may hold");
  DIFFTX_CHECK(o_.world_size > 0 && o_.rank >= 0 && o_.rank < o_.world_size, "loader: rank ", o_.rank,
               " is outside [0, world_size ", o_.world_size, ")");
  DIFFTX_CHECK(o_.micro_batches > 0 && o_.max_windows >= 0, "loader: micro_batches ", o_.micro_batches,
               " must be positive and max_windows ", o_.max_windows, " not negative");
  const int64_t total = reader_.tokens();
  const std::string& names = reader_.shard_names();
  const int64_t window = o_.seq_len + 1;
  DIFFTX_CHECK(total >= window, dir.string(), ": split '", split, "' (", names, ") holds ",
               total, " tokens, fewer than the T+1 = ", window, " a window needs");
  if (!random_) {
    int64_t all = (total - 1) / o_.seq_len;
    if (o_.max_windows > 0) all = std::min(all, o_.max_windows);
    part_begin_ = all * o_.rank / o_.world_size;
    part_end_ = all * (o_.rank + 1) / o_.world_size;
    DIFFTX_CHECK(part_end_ > part_begin_, dir.string(), ": split '", split, "' (", names,
                 ") has ", all, " windows of T+1 = ", window, " tokens, none for rank ", o_.rank,
                 " of ", o_.world_size);
  }
}

int64_t TokenLoader::windows() const {
  return random_ ? reader_.tokens() - o_.seq_len : part_end_ - part_begin_;
}

int64_t TokenLoader::window_start(int64_t step, int64_t row) const {
  DIFFTX_CHECK(random_, "loader: window_start is for random sampling");
  // Nearby (step, row) pairs give unrelated positions (derive_rng).
  Rng rng = derive_rng(o_.seed, {uint64_t(step), uint64_t(row)});
  return static_cast<int64_t>(rng.below(static_cast<uint64_t>(windows())));
}

void TokenLoader::read_window(int64_t start, int32_t* inputs, int32_t* targets) const {
  reader_.copy(start, o_.seq_len, inputs);
  reader_.copy(start + 1, o_.seq_len, targets);
}

int64_t TokenLoader::next(int32_t* inputs, int32_t* targets) {
  const int64_t B = o_.batch, T = o_.seq_len;
  if (random_) {
    for (int64_t b = 0; b < B; ++b)
      read_window(window_start(state_.step, global_row(micro_, b)), inputs + b * T, targets + b * T);
    if (++micro_ == o_.micro_batches) {
      micro_ = 0;
      ++state_.step;
    }
    return B;
  }
  const int64_t rows = std::min(B, windows() - state_.position);
  for (int64_t b = 0; b < rows; ++b)
    read_window((part_begin_ + state_.position + b) * T, inputs + b * T, targets + b * T);
  std::fill(inputs + rows * T, inputs + B * T, 0);
  std::fill(targets + rows * T, targets + B * T, kIgnoreTarget);
  state_.position += rows;
  return rows;
}

LoaderState TokenLoader::state() const {
  DIFFTX_CHECK(micro_ == 0, "loader: state asked for after ", micro_, " of the ", o_.micro_batches,
               " micro-batches of step ", state_.step + 1, " (only whole steps can be saved)");
  return state_;
}

void TokenLoader::restore(const LoaderState& state) {
  DIFFTX_CHECK(state.position <= (random_ ? 0 : windows()), "loader: restored position ",
               state.position, " is beyond the ", windows(), " windows of split '", reader_.split(), "'");
  state_ = state;
  micro_ = 0;
}

}  // namespace difftx::data
