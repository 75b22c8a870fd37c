// Printing generated text token by token: a token's bytes may end inside a multi-byte UTF-8
// character (byte-level BPE), so bytes that may still complete a character are held back until
// it completes. Bytes that can never become valid UTF-8 come out as U+FFFD.
#pragma once
#include <string>
#include <string_view>

namespace difftx::infer {

class Utf8Stream {
 public:
  // Appends bytes; returns the text that is now complete (valid UTF-8).
  std::string push(std::string_view bytes);
  // The end of the stream: a held-back incomplete character comes out as U+FFFD.
  std::string finish();

 private:
  std::string pending_;
};

}  // namespace difftx::infer
