#include "data/loader.h"

#include <algorithm>

#include "core/error.h"
#include "core/rng.h"

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

TokenLoader::TokenLoader(const std::filesystem::path& dir, const std::string& split,
                         int64_t batch, int64_t seq_len, uint64_t seed, int rank, int world_size,
                         Sampling sampling)
    : reader_(dir, split),
      batch_(batch),
      seq_len_(seq_len),
      seed_(seed),
      rank_(rank),
      world_size_(world_size),
      random_(sampling == Sampling::random ||
              (sampling == Sampling::by_split && split == "train")) {
  DIFFTX_CHECK(batch > 0 && seq_len > 0, "loader: batch ", batch, " and seq_len ", seq_len,
               " must be positive");
  DIFFTX_CHECK(world_size > 0 && rank >= 0 && rank < world_size, "loader: rank ", rank,
               " is outside [0, world_size ", world_size, ")");
  const int64_t total = reader_.tokens();
  const std::string& names = reader_.shard_names();
  const int64_t window = seq_len + 1;
  DIFFTX_CHECK(total >= window, dir.string(), ": split '", split, "' (", names, ") holds ",
               total, " tokens, fewer than the T+1 = ", window, " a window needs");
  if (random_) {
    part_begin_ = total * rank / world_size;
    part_end_ = total * (rank + 1) / world_size;
    DIFFTX_CHECK(part_end_ - part_begin_ >= window, dir.string(), ": split '", split, "' (",
                 names, "): rank ", rank, " of ", world_size, " gets ", part_end_ - part_begin_,
                 " tokens, fewer than the T+1 = ", window, " a window needs");
  } else {
    const int64_t all = (total - 1) / seq_len;
    part_begin_ = all * rank / world_size;
    part_end_ = all * (rank + 1) / world_size;
    DIFFTX_CHECK(part_end_ > part_begin_, dir.string(), ": split '", split, "' (", names,
                 ") has ", all, " windows of T+1 = ", window, " tokens, none for rank ", rank,
                 " of ", world_size);
  }
}

int64_t TokenLoader::windows() const {
  return random_ ? part_end_ - part_begin_ - seq_len_ : part_end_ - part_begin_;
}

int64_t TokenLoader::window_start(int64_t step, int64_t row) const {
  DIFFTX_CHECK(random_, "loader: window_start is for random sampling");
  // Nearby (step, rank, row) triples give unrelated positions (derive_rng).
  Rng rng = derive_rng(seed_, {uint64_t(step), uint64_t(rank_), uint64_t(row)});
  return part_begin_ + static_cast<int64_t>(rng.below(static_cast<uint64_t>(windows())));
}

void TokenLoader::read_window(int64_t start, int32_t* inputs, int32_t* targets) const {
  reader_.copy(start, seq_len_, inputs);
  reader_.copy(start + 1, seq_len_, targets);
}

int64_t TokenLoader::next(int32_t* inputs, int32_t* targets) {
  if (random_) {
    for (int64_t b = 0; b < batch_; ++b)
      read_window(window_start(state_.step, b), inputs + b * seq_len_, targets + b * seq_len_);
    ++state_.step;
    return batch_;
  }
  const int64_t rows = std::min(batch_, windows() - state_.position);
  for (int64_t b = 0; b < rows; ++b)
    read_window((part_begin_ + state_.position + b) * seq_len_, inputs + b * seq_len_,
                targets + b * seq_len_);
  std::fill(inputs + rows * seq_len_, inputs + batch_ * seq_len_, 0);
  std::fill(targets + rows * seq_len_, targets + batch_ * seq_len_, kIgnoreTarget);
  state_.position += rows;
  return rows;
}

void TokenLoader::restore(const LoaderState& state) {
  DIFFTX_CHECK(state.position <= (random_ ? 0 : windows()), "loader: restored position ",
               state.position, " is beyond the ", windows(), " windows of split '", reader_.split(), "'");
  state_ = state;
}

}  // namespace difftx::data
