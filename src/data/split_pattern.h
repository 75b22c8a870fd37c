// A PCRE2 pattern (UTF + UCP, JIT-compiled) that cuts text into pieces. Two ways: tiktoken's,
// where successive matches must cover the text (split), and Hugging Face's Split
// pre-tokenizer's, where the text between matches is kept too (segments).
#pragma once
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"

namespace difftx::data {

class SplitPattern {
 public:
  enum class Mode { covering, searching };
  // Throws difftx::Error naming the pattern and the offset of a syntax error. split() needs
  // Mode::covering (anchored matching), segments() Mode::searching.
  explicit SplitPattern(const std::string& pattern, Mode mode = Mode::covering);

  // Calls piece(std::string_view) for each successive match. The text must be valid UTF-8
  // (checked once by the caller: matching uses PCRE2_NO_UTF_CHECK). Text that no alternative
  // matches is an error rather than silently dropped: it would break decode(encode(x)) == x.
  template <typename OnPiece>
  void split(std::string_view text, OnPiece&& piece) const;

  // Calls segment(begin, end, is_match) for the matches and the non-empty gaps between them,
  // in order, covering the text. Empty matches are skipped. Text as for split().
  template <typename OnSegment>
  void segments(std::string_view text, OnSegment&& segment) const;

  const std::string& pattern() const { return pattern_; }
  Mode mode() const { return mode_; }

 private:
  using MatchData = std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)>;
  MatchData match_data() const;
  // PCRE2's default match limit (10M steps) refuses valid text such as a run of 10M spaces; a
  // limit that grows with the text lets text of any shape split while a pathological pattern
  // still stops (in time linear in the text).
  using MatchContext = std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)>;
  static MatchContext match_context(size_t text_bytes);
  [[noreturn]] void match_failed(int rc, size_t offset) const;
  // Matches from offset 0 with `options` (and PCRE2_NO_UTF_CHECK) while the offset is inside the
  // text: on_match(rc, ovector, offset) returns the offset of the next match.
  template <typename OnMatch>
  void each_match(std::string_view text, uint32_t options, OnMatch&& on_match) const;

  std::string pattern_;
  Mode mode_;
  std::shared_ptr<pcre2_code> code_;
};

template <typename OnMatch>
void SplitPattern::each_match(std::string_view text, uint32_t options, OnMatch&& on_match) const {
  const MatchData match = match_data();
  const MatchContext context = match_context(text.size());
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  for (size_t offset = 0; offset < text.size();) {
    const int rc = pcre2_match(code_.get(), subject, text.size(), offset, PCRE2_NO_UTF_CHECK | options, match.get(),
                               context.get());
    offset = on_match(rc, pcre2_get_ovector_pointer(match.get()), offset);
  }
}

template <typename OnPiece>
void SplitPattern::split(std::string_view text, OnPiece&& piece) const {
  DIFFTX_CHECK(mode_ == Mode::covering, "split pattern: split() needs Mode::covering");
  each_match(text, 0, [&](int rc, const PCRE2_SIZE* ovector, size_t offset) {
    if (rc < 0 || ovector[0] != offset || ovector[1] <= offset) match_failed(rc, offset);
    piece(text.substr(offset, ovector[1] - offset));
    return size_t{ovector[1]};
  });
}

template <typename OnSegment>
void SplitPattern::segments(std::string_view text, OnSegment&& segment) const {
  DIFFTX_CHECK(mode_ == Mode::searching, "split pattern: segments() needs Mode::searching");
  each_match(text, PCRE2_NOTEMPTY, [&](int rc, const PCRE2_SIZE* ovector, size_t offset) {
    if (rc == PCRE2_ERROR_NOMATCH) {  // the rest is a gap
      segment(offset, text.size(), false);
      return text.size();
    }
    if (rc < 0) match_failed(rc, offset);
    if (ovector[0] > offset) segment(offset, size_t{ovector[0]}, false);
    segment(size_t{ovector[0]}, size_t{ovector[1]}, true);
    return size_t{ovector[1]};
  });
}

}  // namespace difftx::data
