#include "infer/utf8_stream.h"

#include "data/utf8.h"

namespace difftx::infer {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Whether some continuation bytes complete `rest` (an invalid tail, at most 3 bytes) into a
// valid character. Continuation bytes are 0x80-0xBF; the second byte's narrower ranges (after
// E0, ED, F0, F4; RFC 3629) each contain 0x80 or 0xBF, so trying those two fillers suffices.
bool may_complete(std::string_view rest) {
  if (rest.size() >= 4) return false;
  for (char filler : {'\x80', '\xBF'})
    for (size_t extra = 1; rest.size() + extra <= 4; ++extra) {
      const std::string candidate = std::string(rest) + std::string(extra, filler);
      if (data::valid_utf8_prefix(candidate) == candidate.size()) return true;
    }
  return false;
}

}  // namespace

std::string Utf8Stream::push(std::string_view bytes) {
  pending_ += bytes;
  std::string out;
  std::string_view rest = pending_;
  while (!rest.empty()) {
    const size_t valid = data::valid_utf8_prefix(rest);
    out += rest.substr(0, valid);
    rest.remove_prefix(valid);
    if (rest.empty() || may_complete(rest)) break;
    out += kReplacement;  // a byte no continuation can save
    rest.remove_prefix(1);
  }
  pending_ = std::string(rest);
  return out;
}

std::string Utf8Stream::finish() {
  std::string out = pending_.empty() ? "" : std::string(kReplacement);
  pending_.clear();
  return out;
}

}  // namespace difftx::infer
