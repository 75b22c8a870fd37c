// The added tokens of a tokenizer (tokenizer.json "added_tokens"; tiktoken's special tokens):
// strings that are cut out of the text before pre-tokenization and become one id each. As
// transformers does: at each position the longest token wins, the earliest position first;
// lstrip / rstrip tokens take the white space before / after them along. Special tokens are
// matched only when the caller allows (difftx's Specials); the others always.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace difftx::data {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = true;
  bool lstrip = false;
  bool rstrip = false;
};

class AddedTokens {
 public:
  AddedTokens() = default;
  // Errors (prefixed with where): empty content, a repeated id or content.
  AddedTokens(std::vector<AddedToken> tokens, const std::string& where);

  struct Match {
    size_t begin, end;  // the bytes the token replaces, stripped white space included
    const AddedToken* token;
  };
  // The first match in text at or after from; white space is stripped back to from at most.
  std::optional<Match> find(std::string_view text, size_t from, bool with_special) const;

  const AddedToken* by_id(int32_t id) const;
  const AddedToken* by_content(std::string_view content) const;
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  bool empty() const { return tokens_.empty(); }

 private:
  std::vector<AddedToken> tokens_;
  std::array<std::vector<uint32_t>, 256> by_first_byte_;  // indices into tokens_, longest first
  std::map<int32_t, uint32_t> index_of_id_;
  bool all_special_ = true;  // then find() without specials has nothing to look for
};

// Unicode White_Space: the white space that lstrip / rstrip remove (as Rust's
// char::is_whitespace). Returns how many bytes of UTF-8 the white space character ending at /
// starting at pos has, 0 when there is none.
size_t white_space_before(std::string_view text, size_t pos);
size_t white_space_after(std::string_view text, size_t pos);

}  // namespace difftx::data
