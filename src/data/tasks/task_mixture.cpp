#include "data/tasks/task_mixture.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "data/loader.h"
#include "data/tokenizer_files.h"

namespace difftx::retrieval {
namespace {

constexpr int64_t kMostNeedles = 8;
constexpr uint64_t kGoldenRatio64 = 0x9E3779B97F4A7C15ull;  // 2^64 / phi
// Mixed into every mixture seed, so task rows draw nothing in step with the loader's windows.
constexpr uint64_t kMixtureSalt = 0x6d69787475726521ull;

// A task row counts its answers only: inputs the task's first T ids, targets kIgnoreTarget except
// at each answer position a (<= T), whose id is the target one step before it.
void write_task_row(const std::vector<int32_t>& tokens, const std::vector<int64_t>& answers, int64_t T,
                    int32_t* inputs, int32_t* targets) {
  std::copy(tokens.begin(), tokens.begin() + T, inputs);
  std::fill(targets, targets + T, data::kIgnoreTarget);
  for (int64_t a : answers)
    if (a <= T) targets[a - 1] = tokens[a];
}

}  // namespace

TaskMixture::TaskMixture(const MixtureSpec& spec, const std::filesystem::path& data_dir, int64_t seq_len,
                         uint64_t seed, OptionSpelling spelling)
    : spec_(spec),
      seq_len_(seq_len),
      seed_(seed),
      train_(data_dir, "train"),
      tokenizer_(data::load_tokenizer(data_dir.string())),
      niah_(tokenizer_, train_),
      mqar_(mqar_vocabulary(tokenizer_)) {
  const int64_t row = seq_len + 1;
  for (int64_t n = 1; n <= kMostNeedles; ++n)
    if (2 * niah_.max_task_tokens(n, std::min(n, max_queried_), kDefaultValueDigits) <= row) max_needles_ = n;
  if (spec.niah > 0) {
    const int64_t one = niah_.max_task_tokens(1, 1, kDefaultValueDigits);
    const std::string seq = option_name("seq_len", spelling);
    DIFFTX_CHECK(max_needles_ >= 1, option_name("mix", spelling), " niah: ", seq, " ", seq_len,
                 " is too short for NIAH rows: a needle and its query take up to ", one,
                 " tokens, which must be at most half the row (", seq, " >= ", 2 * one - 1, ")");
    niah_.validate(NiahSpec{row, max_needles_, std::min(max_needles_, max_queried_), 0.0, kDefaultValueDigits});
  }
  max_pairs_ = std::clamp<int64_t>(seq_len / 4, 1, 32);
  if (spec.mqar > 0) validate_mqar(MqarSpec{max_pairs_, max_pairs_}, mqar_);
}

RowKind TaskMixture::kind(int64_t step, int64_t row) const {
  const uint64_t offset = derive_rng(seed_ ^ kMixtureSalt, {uint64_t(step)}).next_u64();
  const double u = ((uint64_t(row) * kGoldenRatio64 + offset) >> 11) * 0x1.0p-53;
  if (u < spec_.niah) return RowKind::niah;
  if (u < spec_.niah + spec_.mqar) return RowKind::mqar;
  return RowKind::text;
}

void TaskMixture::fill(RowKind kind, int64_t step, int64_t row, int32_t* inputs, int32_t* targets) const {
  if (kind == RowKind::text) return;
  Rng rng = derive_rng(seed_ ^ kMixtureSalt, {uint64_t(step), uint64_t(row)});
  const int64_t T = seq_len_;
  if (kind == RowKind::niah) {
    NiahSpec spec;
    spec.context = T + 1;
    spec.needles = 1 + static_cast<int64_t>(rng.below(max_needles_));
    spec.queried = 1 + static_cast<int64_t>(rng.below(std::min(spec.needles, max_queried_)));
    spec.depth = rng.uniform();
    const NiahSample s = niah_.sample(spec, rng.next_u64());
    std::vector<int64_t> answers;
    for (const NiahQuery& q : s.queries)
      for (int64_t a = q.answer.begin; a < q.answer.end; ++a) answers.push_back(a);
    write_task_row(s.tokens, answers, T, inputs, targets);
    return;
  }
  MqarSample s;
  const int64_t least = std::min<int64_t>(2, max_pairs_);
  while (static_cast<int64_t>(s.tokens.size()) < T + 1) {
    const int64_t pairs = least + static_cast<int64_t>(rng.below(max_pairs_ - least + 1));
    append_mqar_episode(MqarSpec{pairs, pairs}, mqar_, rng, s);
  }
  write_task_row(s.tokens, s.answers, T, inputs, targets);
}

void TaskMixture::apply(int64_t step, int64_t first_row, int64_t rows, int32_t* inputs, int32_t* targets) const {
  for (int64_t b = 0; b < rows; ++b) {
    const int64_t row = first_row + b;
    fill(kind(step, row), step, row, inputs + b * seq_len_, targets + b * seq_len_);
  }
}

std::string TaskMixture::describe() const {
  std::ostringstream out;
  out << "mixture:";
  if (spec_.niah > 0)
    out << " NIAH " << spec_.niah * 100 << "% of rows (N 1-" << max_needles_ << ", R 1-"
        << std::min(max_needles_, max_queried_) << ", " << kDefaultValueDigits << "-digit values, haystacks from "
        << train_.dataset().dir.string() << " train)";
  if (spec_.mqar > 0)
    out << (spec_.niah > 0 ? "," : "") << " MQAR " << spec_.mqar * 100 << "% of rows (episodes of "
        << std::min<int64_t>(2, max_pairs_) << "-" << max_pairs_ << " pairs, every key queried)";
  return out.str();
}

}  // namespace difftx::retrieval
