#include "infer/stop_text.h"

#include <algorithm>

#include "data/tokenizer.h"

namespace difftx::infer {

bool token_bytes(const data::Tokenizer* tokenizer, std::span<const int32_t> silent, int32_t id, std::string& out) {
  if (!tokenizer || id >= tokenizer->vocab_size() || std::binary_search(silent.begin(), silent.end(), id)) return false;
  out = tokenizer->decode({&id, 1});
  return true;
}

StopText::StopText(std::vector<std::string> stops, const std::optional<ReasoningBlock>& block, bool include)
    : stops_(std::move(stops)), include_(include) {
  if (block && !stops_.empty()) block_.emplace(*block);
}

std::string StopText::push(std::string_view bytes, bool look) {
  if (stopped_) return {};
  look_ = look;
  const std::string text = utf8_.push(bytes);
  if (!block_) return match(text);
  block_->push(text);
  unplaced_ += text;
  // Of the text newly placed, the block's part comes out as it is (it precedes all the text that
  // is matched, so nothing is held then), the rest is matched.
  const size_t placed = block_->placed() - unplaced_from_;
  const size_t block_end = std::min(block_->block_bytes(), block_->placed());
  const size_t quiet = block_end > unplaced_from_ ? block_end - unplaced_from_ : 0;
  std::string out = unplaced_.substr(0, quiet);
  const std::string after = unplaced_.substr(quiet, placed - quiet);
  unplaced_.erase(0, placed);
  unplaced_from_ += placed;
  return out + match(after);
}

std::string StopText::match(std::string_view text) {
  held_ += text;
  // The earliest stop string in the held text (a stop string's start is never emitted, so one
  // that completes now starts inside held_).
  size_t cut = std::string::npos, end = 0;
  for (size_t i = 0; i < stops_.size(); ++i)
    if (const size_t at = look_ ? held_.find(stops_[i]) : std::string::npos; at < cut)
      cut = at, end = at + stops_[i].size(), stop_ = i;
  if (cut != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, include_ ? end : cut);
    held_.clear();
    return out;
  }
  // Hold back the longest tail of held_ that is a proper prefix of a stop string.
  size_t keep = 0;
  for (const std::string& s : stops_)
    for (size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n)
      if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
        keep = n;
        break;
      }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopText::finish() {
  if (stopped_) return {};
  std::string out = match(unplaced_);  // a start that never became the open marker: no block
  unplaced_.clear();
  if (stopped_) return out;
  out += held_ + utf8_.finish();
  held_.clear();
  return out;
}

}  // namespace difftx::infer
