// A chat reply streamed through serve::ReplyStream in parts, the deltas summed back into the
// parts a whole reply has (to compare with serve::read_reply): each call from its first piece
// (the only one with a name and id, its index one past the last call's) and its arguments' pieces after.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "serve/reply_reader.h"

namespace difftx::testing {

// The text pushed in parts ending at each of `cuts` (ascending), then the rest, marked final.
serve::ReplyParts streamed_reply(const serve::ReplyFormat& format, std::string_view text,
                                 const std::vector<size_t>& cuts);

}  // namespace difftx::testing
