#include "infer/stop_text.h"

#include <algorithm>

namespace difftx::infer {

std::string StopText::push(std::string_view bytes) {
  if (stopped_) return {};
  held_ += utf8_.push(bytes);
  // The earliest stop string in the held text (a stop string's start is never emitted, so one
  // that completes now starts inside held_).
  size_t cut = std::string::npos;
  for (const std::string& s : stops_) cut = std::min(cut, held_.find(s));
  if (cut != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, cut);
    held_.clear();
    return out;
  }
  // Hold back the longest tail of held_ that is a proper prefix of a stop string.
  size_t keep = 0;
  for (const std::string& s : stops_)
    for (size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n)
      if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
        keep = n;
        break;
      }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopText::finish() {
  if (stopped_) return {};
  std::string out = held_ + utf8_.finish();
  held_.clear();
  return out;
}

}  // namespace difftx::infer
