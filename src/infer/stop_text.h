// A request's generated text as it streams, with its stop strings: bytes that may still complete
// a UTF-8 character (utf8_stream.h) or may still become a stop string are held back; when a stop
// string appears, the text ends just before it, so a stop string is never emitted, also when it
// spans several tokens.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "infer/utf8_stream.h"

namespace difftx::infer {

class StopText {
 public:
  explicit StopText(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Appends a token's bytes; returns the text that is now settled. After a stop string appeared,
  // stopped() is true and nothing more comes out.
  std::string push(std::string_view bytes);
  // The end of the stream: the held-back text (an incomplete character as U+FFFD).
  std::string finish();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  Utf8Stream utf8_;
  std::string held_;  // settled UTF-8 that may be the start of a stop string
  bool stopped_ = false;
};

}  // namespace difftx::infer
