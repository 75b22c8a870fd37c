#include "infer/reasoning_block.h"

#include <algorithm>

namespace difftx::infer {

std::optional<size_t> open_marker_end(std::string_view reply, const ReasoningMarkers& m, bool final) {
  constexpr size_t kLeadingSpace = 16;
  size_t i = 0;
  while (i < reply.size() && i <= kLeadingSpace &&
         (reply[i] == ' ' || reply[i] == '\n' || reply[i] == '\t' || reply[i] == '\r'))
    ++i;
  const std::string_view rest = reply.substr(i);
  if (i <= kLeadingSpace && rest.substr(0, m.open.size()) == m.open) return i + m.open.size();
  if (!final && i <= kLeadingSpace && rest.size() < m.open.size() && m.open.substr(0, rest.size()) == rest)
    return std::nullopt;
  return 0;
}

ReasoningWatch::ReasoningWatch(ReasoningBlock block)
    : block_(std::move(block)), state_(block_.open_at_start ? State::inside : State::undecided) {}

size_t ReasoningWatch::block_bytes() const {
  if (state_ == State::inside) return seen_;
  return state_ == State::closed ? end_ : 0;
}

void ReasoningWatch::push(std::string_view bytes) {
  const size_t start = seen_ - tail_.size();  // where tail_ starts in the output
  seen_ += bytes.size();
  if (state_ == State::closed || state_ == State::none) return;
  tail_ += bytes;
  size_t body = 0;  // where the block's text starts in tail_
  if (state_ == State::undecided) {
    const std::optional<size_t> end = open_marker_end(tail_, block_.markers, false);
    if (!end) return;
    if (*end == 0) {
      state_ = State::none;
      tail_.clear();
      return;
    }
    state_ = State::inside;
    body = *end;
  }
  const std::string& close = block_.markers.close;
  if (const size_t at = tail_.find(close, body); at != std::string::npos) {
    state_ = State::closed;
    end_ = start + at + close.size();
    tail_.clear();
    return;
  }
  tail_.erase(0, tail_.size() - std::min(tail_.size() - body, close.size() - 1));
}

}  // namespace difftx::infer
