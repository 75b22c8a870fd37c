// Text read a line at a time, for the line-based files (tiktoken ranks, merges.txt, JSONL).
#pragma once
#include <cstddef>
#include <string_view>

namespace difftx {

// Calls f(line, number) for each line of text: split at '\n' (not included), numbered from 1, a
// last line without '\n' included.
template <class F>
void for_each_line(std::string_view text, F&& f) {
  size_t number = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    f(text.substr(pos, end - pos), ++number);
    pos = end + 1;
  }
}

}  // namespace difftx
