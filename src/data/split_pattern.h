// The pre-tokenizer: a PCRE2 pattern (UTF + UCP, JIT-compiled) whose successive matches cut text
// into the pieces that BPE encodes one by one.
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
  // Throws difftx::Error naming the pattern and the offset of a syntax error.
  explicit SplitPattern(const std::string& pattern);

  // Calls piece(std::string_view) for each successive match. The text must be valid UTF-8
  // (checked once by the caller: matching uses PCRE2_NO_UTF_CHECK). Text that no alternative
  // matches is an error rather than silently dropped: it would break decode(encode(x)) == x.
  template <typename OnPiece>
  void split(std::string_view text, OnPiece&& piece) const;

  const std::string& pattern() const { return pattern_; }

 private:
  [[noreturn]] void match_failed(int rc, size_t offset) const;

  std::string pattern_;
  std::shared_ptr<pcre2_code> code_;
};

template <typename OnPiece>
void SplitPattern::split(std::string_view text, OnPiece&& piece) const {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(code_.get(), nullptr), &pcre2_match_data_free);
  DIFFTX_CHECK(match != nullptr, "split pattern: out of memory");
  // PCRE2's default match limit (10M steps) refuses valid text such as a run of 10M spaces;
  // a limit that grows with the text lets text of any shape split while a pathological
  // pattern still stops (in time linear in the text).
  std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> context(
      pcre2_match_context_create(nullptr), &pcre2_match_context_free);
  DIFFTX_CHECK(context != nullptr, "split pattern: out of memory");
  const uint64_t limit = std::min<uint64_t>(10'000'000 + 64 * static_cast<uint64_t>(text.size()), UINT32_MAX);
  pcre2_set_match_limit(context.get(), static_cast<uint32_t>(limit));
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t offset = 0;
  while (offset < text.size()) {
    const int rc = pcre2_match(code_.get(), subject, text.size(), offset, PCRE2_NO_UTF_CHECK,
                               match.get(), context.get());
    if (rc < 0) match_failed(rc, offset);
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    if (ovector[0] != offset || ovector[1] <= offset) match_failed(rc, offset);
    piece(text.substr(offset, ovector[1] - offset));
    offset = ovector[1];
  }
}

}  // namespace difftx::data
