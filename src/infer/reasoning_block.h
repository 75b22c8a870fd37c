// A reasoning model's thinking block (<think>...</think>, or a template's other markers) at the
// start of its output, followed as the output grows: open from the first byte where the prompt
// left it open, else opened by the output's first bytes (after a little white space), closed by
// its closing marker. The engine matches stop strings only after it (stop_text.h), a reasoning
// budget counts the tokens inside it (grammar/constraint.h), and serve splits a reply at it
// (serve/reasoning.h): all three read the block's bounds the same way, with open_marker_end.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace difftx::infer {

struct ReasoningMarkers {
  std::string open = "<think>", close = "</think>";
};

struct ReasoningBlock {
  ReasoningMarkers markers;
  bool open_at_start = false;  // the rendered prompt left the block open
};

// Where the open marker a reply starts with ends: after at most 16 bytes of white space (a reply
// of more is not a block); 0 where the reply does not start with it; nullopt while its start may
// still become the marker (never when final).
std::optional<size_t> open_marker_end(std::string_view reply, const ReasoningMarkers& markers, bool final);

class ReasoningWatch {
 public:
  explicit ReasoningWatch(ReasoningBlock block);
  // The output's next bytes.
  void push(std::string_view bytes);
  // Whether the output is inside the block now (its closing marker not written yet).
  bool inside() const { return state_ == State::inside; }
  // Output bytes known to be the block's, its markers and the white space before it included: all
  // of them while it is open; 0 where the output does not open one.
  size_t block_bytes() const;
  // Output bytes whose place is known (the block's, or after it): all of them, but none while the
  // output's start may still become the open marker.
  size_t placed() const { return state_ == State::undecided ? 0 : seen_; }

 private:
  enum class State { undecided, inside, closed, none };
  ReasoningBlock block_;
  State state_;
  size_t seen_ = 0;       // output bytes pushed
  size_t end_ = 0;        // closed: where the block ends
  std::string tail_;      // undecided: the output; inside: its end that may start the closing marker
};

}  // namespace difftx::infer
