// Hugging Face's pre-tokenization of the byte-level BPE family (tokenizer.json "pre_tokenizer"):
// a sequence of Split steps, each cutting every piece of the step before it. A Split step finds
// the matches of a pattern and keeps or merges the matches and the text between them by its
// behaviour (tokenizers' SplitDelimiterBehavior; invert swaps matches and gaps first). A
// ByteLevel pre-tokenizer with use_regex is a Split step with GPT-2's pattern, Isolated; its
// byte-to-character mapping needs no step, because difftx's BPE works on the bytes themselves.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.h"
#include "data/split_pattern.h"

namespace difftx::data {

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };
// Their names in tokenizer.json (tokenizers' SplitDelimiterBehavior).
inline constexpr EnumName<SplitBehavior> kSplitBehaviorNames[] = {
    {SplitBehavior::removed, "Removed"},
    {SplitBehavior::isolated, "Isolated"},
    {SplitBehavior::merged_with_previous, "MergedWithPrevious"},
    {SplitBehavior::merged_with_next, "MergedWithNext"},
    {SplitBehavior::contiguous, "Contiguous"}};

// A pattern in Mode::covering splits as tiktoken does (split_pattern.h) and ignores behavior
// and invert.
struct SplitStep {
  SplitPattern pattern;
  SplitBehavior behavior = SplitBehavior::isolated;
  bool invert = false;
};

class PreTokenizer {
 public:
  PreTokenizer() = default;
  explicit PreTokenizer(std::vector<SplitStep> steps) : steps_(std::move(steps)) {}

  // Calls piece(std::string_view) for every non-empty final piece, in order. Text must be valid
  // UTF-8.
  template <typename OnPiece>
  void split(std::string_view text, OnPiece&& piece, size_t step = 0) const;

  const std::vector<SplitStep>& steps() const { return steps_; }

 private:
  std::vector<SplitStep> steps_;
};

// One Split step over text: calls piece(begin, end) for each resulting piece.
template <typename OnPiece>
void split_step(const SplitStep& s, std::string_view text, OnPiece&& piece) {
  // A piece waiting to learn whether the next segment merges into it: [begin, end), and
  // whether it ends in a match (for contiguous and merged_with_previous) or is a lone match
  // (for merged_with_next).
  size_t begin = 0, end = 0;
  bool pending = false, pending_match = false;
  auto flush = [&] {
    if (pending && end > begin) piece(begin, end);
    pending = false;
  };
  s.pattern.segments(text, [&](size_t b, size_t e, bool is_match) {
    is_match = is_match != s.invert;
    switch (s.behavior) {
      case SplitBehavior::removed:
        if (!is_match) piece(b, e);
        return;
      case SplitBehavior::isolated:
        piece(b, e);
        return;
      case SplitBehavior::merged_with_previous:  // a match joins the gap before it
        if (is_match && pending && !pending_match) {
          end = e;
          pending_match = true;
          return;
        }
        break;
      case SplitBehavior::merged_with_next:  // a match joins the gap after it
        if (!is_match && pending && pending_match) {
          end = e;
          pending_match = false;
          return;
        }
        break;
      case SplitBehavior::contiguous:  // adjacent matches join
        if (is_match && pending && pending_match) {
          end = e;
          return;
        }
        break;
    }
    flush();
    begin = b, end = e, pending = true, pending_match = is_match;
  });
  flush();
}

template <typename OnPiece>
void PreTokenizer::split(std::string_view text, OnPiece&& piece, size_t step) const {
  if (text.empty()) return;
  if (step == steps_.size()) return piece(text);
  const SplitStep& s = steps_[step];
  auto next = [&](std::string_view p) {
    if (step + 1 == steps_.size())  // the last step hands its pieces straight over
      piece(p);
    else
      split(p, piece, step + 1);
  };
  if (s.pattern.mode() == SplitPattern::Mode::covering)  // tiktoken's way (split_pattern.h)
    s.pattern.split(text, next);
  else
    split_step(s, text, [&](size_t b, size_t e) { next(text.substr(b, e - b)); });
}

}  // namespace difftx::data
