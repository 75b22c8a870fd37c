#include "grammar/token_vocabulary.h"

#include <algorithm>

#include "core/error.h"
#include "data/tokenizer.h"
#include "grammar/grammar.h"

namespace difftx::grammar {

TokenVocabulary::TokenVocabulary(std::vector<std::string> bytes, std::vector<bool> control)
    : bytes_(std::move(bytes)), control_(std::move(control)) {
  DIFFTX_CHECK(bytes_.size() == control_.size(), "token vocabulary: ", bytes_.size(), " byte strings but ",
               control_.size(), " control flags");
  // The text tokens sorted by their bytes; each adds the nodes beyond its common prefix with the
  // one before.
  std::vector<int32_t> order;
  const auto control_byte = [](char c) { return static_cast<uint8_t>(c) >= kFirstControlByte; };
  for (size_t i = 0; i < bytes_.size(); ++i)
    if (!control_[i] && !bytes_[i].empty() && std::none_of(bytes_[i].begin(), bytes_[i].end(), control_byte))
      order.push_back(static_cast<int32_t>(i));
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return bytes_[a] < bytes_[b] || (bytes_[a] == bytes_[b] && a < b); });
  std::vector<int32_t> path;  // node of each depth - 1 on the current branch
  std::string_view previous;
  for (int32_t id : order) {
    const std::string_view t = bytes_[id];
    size_t common = 0;
    while (common < previous.size() && common < t.size() && previous[common] == t[common]) ++common;
    // Nodes deeper than the common prefix are closed: their subtrees end here.
    for (size_t d = common; d < path.size(); ++d) skip_[path[d]] = static_cast<int32_t>(byte_.size());
    path.resize(common);
    for (size_t d = common; d < t.size(); ++d) {
      path.push_back(static_cast<int32_t>(byte_.size()));
      byte_.push_back(static_cast<uint8_t>(t[d]));
      depth_.push_back(static_cast<int32_t>(d + 1));
      skip_.push_back(0);
      token_begin_.push_back(static_cast<int32_t>(ids_.size()));
    }
    // A token ends at the newest node (sorted, a token comes after its prefixes), so ids_ is
    // in node order and token_begin_ of the next node closes this one's range.
    ids_.push_back(id);
    max_depth_ = std::max(max_depth_, static_cast<int32_t>(t.size()));
    previous = t;
  }
  for (int32_t n : path) skip_[n] = static_cast<int32_t>(byte_.size());
  token_begin_.push_back(static_cast<int32_t>(ids_.size()));
}

std::shared_ptr<const TokenVocabulary> TokenVocabulary::of(const data::Tokenizer& tokenizer, int64_t size) {
  std::vector<std::string> bytes(static_cast<size_t>(size));
  std::vector<bool> control(static_cast<size_t>(size), false);
  for (int32_t id = 0; id < size; ++id) {
    if (tokenizer.ranks().has_rank(id)) {
      bytes[id] = std::string(tokenizer.ranks().bytes_of(id));
    } else if (const data::AddedToken* added = tokenizer.added().by_id(id)) {
      bytes[id] = added->content;
      control[id] = added->special;
    }
  }
  return std::make_shared<TokenVocabulary>(std::move(bytes), std::move(control));
}

}  // namespace difftx::grammar
