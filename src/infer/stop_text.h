// A request's generated text as it streams, with its stop strings: bytes that may still complete
// a UTF-8 character (utf8_stream.h) or may still become a stop string are held back; when a stop
// string appears, the text ends just before it, so a stop string is never emitted, also when it
// spans several tokens (or just after it, where asked: vLLM's include_stop_str_in_output). Where
// the output may open with a reasoning block (reasoning_block.h), stop strings are matched only
// in the text after it, as vLLM skips them in reasoning content: one never cuts the thoughts or
// their closing marker (the model's, or a reasoning budget's forced one). While the output's
// start may still become the block's open marker, it is held.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infer/reasoning_block.h"
#include "infer/utf8_stream.h"

namespace difftx::data {
class Tokenizer;
}

namespace difftx::infer {

// The bytes generated token `id` adds to a request's text, into `out`: false (nothing added) for
// one of the request's `silent` ids (sorted) and where `tokenizer` (null: none) lacks the id.
bool token_bytes(const data::Tokenizer* tokenizer, std::span<const int32_t> silent, int32_t id, std::string& out);

class StopText {
 public:
  // `include`: the text ends after the stop string that appeared, not before it.
  explicit StopText(std::vector<std::string> stops, const std::optional<ReasoningBlock>& block = std::nullopt,
                    bool include = false);

  // Appends a token's bytes; returns the text that is now settled. After a stop string appeared,
  // stopped() is true and nothing more comes out. `look` false (a request's min_tokens not
  // reached, as vLLM has it): no stop string is looked for in the text so far, though a start of
  // one is still held, so one that completes once looked for again is found.
  std::string push(std::string_view bytes, bool look = true);
  // The end of the stream: the held-back text (an incomplete character as U+FFFD).
  std::string finish();
  bool stopped() const { return stopped_; }
  const std::string* stopped_by() const { return stopped_ ? &stops_[stop_] : nullptr; }  // the stop string found
  bool has_stops() const { return !stops_.empty(); }  // false: the text never stops

 private:
  // Appends text in which stop strings are matched; returns what is settled.
  std::string match(std::string_view text);

  std::vector<std::string> stops_;
  bool include_;
  bool look_ = true;  // the last push's
  std::optional<ReasoningWatch> block_;  // where stop strings are not matched (with stop strings only)
  Utf8Stream utf8_;
  std::string unplaced_;      // text the block's watch has not placed yet: it may still open the block
  size_t unplaced_from_ = 0;  // where unplaced_ starts in the text
  std::string held_;          // settled UTF-8 that may be the start of a stop string
  bool stopped_ = false;
  size_t stop_ = 0;  // which of stops_ stopped the text
};

}  // namespace difftx::infer
