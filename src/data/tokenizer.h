// A byte-level BPE tokenizer in tiktoken's model: a split pattern cuts text into pieces, each
// piece is byte-pair encoded over a table of ranks (bpe.h), and special tokens such as
// <|endoftext|> have ids of their own. Immutable once built, so one tokenizer can encode on
// several threads at once. Loading and saving: tokenizer_files.h.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/split_pattern.h"
#include "data/token_table.h"

namespace difftx::data {

// Whether encode() turns special-token strings in the text into their ids (allowed) or
// encodes them as the ordinary characters they are made of (as_text, the safe default for
// untrusted text: a document cannot forge an end-of-text token).
enum class Specials { as_text, allowed };

class Tokenizer {
 public:
  // Validates: every single byte must be a token; special ids must not collide with ranks;
  // end_of_text must name one of the special tokens. Errors start with "tokenizer NAME".
  Tokenizer(std::string name, TokenTable ranks, const std::string& pattern,
            std::map<std::string, int32_t> special_tokens,
            const std::string& end_of_text = "<|endoftext|>");

  // Throws difftx::Error naming the byte offset when text is not valid UTF-8.
  std::vector<int32_t> encode(std::string_view text, Specials specials = Specials::as_text) const;
  void encode_append(std::string_view text, std::vector<int32_t>& out,
                     Specials specials = Specials::as_text) const;

  // The bytes of the tokens, concatenated. Ids that split a multi-byte character give bytes
  // that are not valid UTF-8 on their own; decoding all the ids of an encode() gives back the
  // text exactly. An id that is no token is an error naming it and its position.
  std::string decode(std::span<const int32_t> ids) const;

  // One past the largest id, special tokens included.
  int64_t vocab_size() const { return vocab_size_; }
  int32_t end_of_text() const { return end_of_text_; }
  const std::string& end_of_text_string() const { return end_of_text_string_; }
  const std::string& name() const { return name_; }
  const std::string& pattern() const { return split_.pattern(); }
  const std::map<std::string, int32_t>& special_tokens() const { return special_tokens_; }
  const TokenTable& ranks() const { return ranks_; }

 private:
  void encode_ordinary(std::string_view text, std::vector<int32_t>& out) const;

  std::string name_;
  TokenTable ranks_;
  SplitPattern split_;
  std::map<std::string, int32_t> special_tokens_;
  std::map<int32_t, std::string> special_by_id_;
  std::string end_of_text_string_;
  int32_t end_of_text_ = -1;
  int64_t vocab_size_ = 0;
};

}  // namespace difftx::data
