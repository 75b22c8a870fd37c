#include "data/added_tokens.h"

#include <algorithm>

#include "core/error.h"

namespace difftx::data {
namespace {

bool is_white_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// The code point of the UTF-8 character at text[pos] (text is valid UTF-8) and its length.
std::pair<uint32_t, size_t> char_at(std::string_view text, size_t pos) {
  const auto c = static_cast<unsigned char>(text[pos]);
  const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  uint32_t cp = n == 1 ? c : c & (0x7Fu >> n);
  for (size_t i = 1; i < n && pos + i < text.size(); ++i)
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3Fu);
  return {cp, n};
}

}  // namespace

size_t white_space_after(std::string_view text, size_t pos) {
  if (pos >= text.size()) return 0;
  const auto [cp, n] = char_at(text, pos);
  return is_white_space(cp) ? n : 0;
}

size_t white_space_before(std::string_view text, size_t pos) {
  if (pos == 0) return 0;
  size_t start = pos - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  const auto [cp, n] = char_at(text, start);
  return is_white_space(cp) && start + n == pos ? n : 0;
}

AddedTokens::AddedTokens(std::vector<AddedToken> tokens, const std::string& where)
    : tokens_(std::move(tokens)) {
  std::map<std::string_view, int32_t> seen;
  for (uint32_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& t = tokens_[i];
    DIFFTX_CHECK(!t.content.empty(), where, ": added token ", t.id, " is the empty string");
    DIFFTX_CHECK(index_of_id_.emplace(t.id, i).second, where, ": two added tokens have id ", t.id);
    DIFFTX_CHECK(seen.emplace(t.content, t.id).second, where, ": added token '", t.content,
                 "' appears twice (ids ", seen[t.content], " and ", t.id, ")");
    by_first_byte_[static_cast<unsigned char>(t.content[0])].push_back(i);
    all_special_ &= t.special;
  }
  for (auto& list : by_first_byte_)
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return tokens_[a].content.size() > tokens_[b].content.size();
    });
}

std::optional<AddedTokens::Match> AddedTokens::find(std::string_view text, size_t from,
                                                    bool with_special) const {
  if (tokens_.empty() || (all_special_ && !with_special)) return std::nullopt;
  for (size_t pos = from; pos < text.size(); ++pos) {
    for (uint32_t i : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
      const AddedToken& t = tokens_[i];
      if ((t.special && !with_special) || text.compare(pos, t.content.size(), t.content) != 0)
        continue;
      Match m{pos, pos + t.content.size(), &t};
      for (size_t n; t.lstrip && m.begin > from && (n = white_space_before(text, m.begin)) > 0;)
        m.begin -= n;
      for (size_t n; t.rstrip && (n = white_space_after(text, m.end)) > 0;) m.end += n;
      return m;
    }
  }
  return std::nullopt;
}

const AddedToken* AddedTokens::by_id(int32_t id) const {
  auto it = index_of_id_.find(id);
  return it == index_of_id_.end() ? nullptr : &tokens_[it->second];
}

const AddedToken* AddedTokens::by_content(std::string_view content) const {
  for (const AddedToken& t : tokens_)
    if (t.content == content) return &t;
  return nullptr;
}

}  // namespace difftx::data
