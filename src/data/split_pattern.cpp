#include "data/split_pattern.h"

#include <algorithm>

namespace difftx::data {
namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

SplitPattern::SplitPattern(const std::string& pattern, Mode mode) : pattern_(pattern), mode_(mode) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  // DOLLAR_ENDONLY: '$' means the end of the text, as in the Rust regex tiktoken runs on.
  // ANCHORED (covering mode): each piece must start where the last one ended (and JIT keeps
  // working, which it would not with PCRE2_ANCHORED given at match time).
  const uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY |
                           (mode == Mode::covering ? PCRE2_ANCHORED : 0u);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   options, &error,
                                   &error_offset, nullptr);
  DIFFTX_CHECK(code != nullptr, "split pattern: ", pcre2_message(error), " at offset ",
               error_offset, " of '", pattern, "'");
  code_.reset(code, &pcre2_code_free);
  const int jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  DIFFTX_CHECK(jit == 0, "split pattern: JIT compilation failed (", pcre2_message(jit), ") for '",
               pattern, "'");
}

SplitPattern::MatchContext SplitPattern::match_context(size_t text_bytes) {
  MatchContext context(pcre2_match_context_create(nullptr), &pcre2_match_context_free);
  DIFFTX_CHECK(context != nullptr, "split pattern: out of memory");
  const uint64_t limit = std::min<uint64_t>(10'000'000 + 64 * static_cast<uint64_t>(text_bytes), UINT32_MAX);
  pcre2_set_match_limit(context.get(), static_cast<uint32_t>(limit));
  return context;
}

SplitPattern::MatchData SplitPattern::match_data() const {
  MatchData match(pcre2_match_data_create_from_pattern(code_.get(), nullptr), &pcre2_match_data_free);
  DIFFTX_CHECK(match != nullptr, "split pattern: out of memory");
  return match;
}

void SplitPattern::match_failed(int rc, size_t offset) const {
  if (rc == PCRE2_ERROR_NOMATCH || rc >= 0)
    fail("split pattern '", pattern_, "' matches nothing at byte offset ", offset,
         ": every character of the text must belong to some piece");
  fail("split pattern: PCRE2 matching failed at byte offset ", offset, ": ", pcre2_message(rc));
}

}  // namespace difftx::data
