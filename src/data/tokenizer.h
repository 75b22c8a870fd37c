// A byte-level BPE tokenizer: text is cut at added (special) tokens, each section is normalized,
// pre-tokenized into pieces (pre_tokenizer.h), and each piece is byte-pair encoded (bpe.h).
// Two families share it: tiktoken's (a table of ranks, one split pattern, special tokens such
// as <|endoftext|>) and Hugging Face's byte-level BPE (tokenizer.json: a vocabulary with a merge
// list, NFC, Split pre-tokenizers, added tokens, a BOS template). Immutable once built, so one
// tokenizer can encode on several threads at once. Loading and saving: tokenizer_files.h,
// hf_tokenizer.h.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/added_tokens.h"
#include "data/normalizer.h"
#include "data/pair_merges.h"
#include "data/pre_tokenizer.h"
#include "data/token_table.h"

namespace difftx::data {

// Whether encode() turns special-token strings in the text into their ids (allowed) or
// encodes them as the ordinary characters they are made of (as_text, the safe default for
// untrusted text: a document cannot forge an end-of-text token). Added tokens that are not
// special (tokenizer.json "special": false) are always matched, as in transformers.
enum class Specials { as_text, allowed };

// What a tokenizer is made of.
struct TokenizerParts {
  std::string name;
  TokenTable vocab;                  // bytes <-> id of the tokens BPE makes
  std::optional<PairMerges> merges;  // a merge list (Hugging Face); none: tiktoken's rule (bpe.h)
  bool whole_piece_first = true;     // a piece that is a token is that token (tiktoken; ignore_merges)
  Normalization normalization = Normalization::none;
  std::vector<SplitStep> pre_tokenizer;
  std::vector<AddedToken> added;
  std::string end_of_text;            // the added token that separates documents
  std::vector<int32_t> prefix, suffix;  // put around a text by add_template() (BOS, EOS)
};

class Tokenizer {
 public:
  // tiktoken's family. Validates: every single byte must be a token; special ids must not
  // collide with ranks; end_of_text must name one of the special tokens. Errors start with
  // "tokenizer NAME".
  Tokenizer(std::string name, TokenTable ranks, const std::string& pattern,
            std::map<std::string, int32_t> special_tokens,
            const std::string& end_of_text = "<|endoftext|>");
  // Any family; the same checks, and an added token may share an id with a vocabulary token
  // only when both are the same bytes (tokenizer.json files list some tokens in both).
  explicit Tokenizer(TokenizerParts parts);

  // Throws difftx::Error naming the byte offset when text is not valid UTF-8.
  std::vector<int32_t> encode(std::string_view text, Specials specials = Specials::as_text) const;
  void encode_append(std::string_view text, std::vector<int32_t>& out,
                     Specials specials = Specials::as_text) const;
  // prefix + ids + suffix: what transformers' add_special_tokens=True adds (BOS for Llama 3).
  std::vector<int32_t> add_template(std::span<const int32_t> ids) const;

  // The bytes of the tokens, concatenated. Ids that split a multi-byte character give bytes
  // that are not valid UTF-8 on their own; decoding all the ids of an encode() gives back the
  // text exactly (normalized, where the tokenizer normalizes). An id that is no token is an
  // error naming it and its position.
  std::string decode(std::span<const int32_t> ids) const;

  // One past the largest id, added tokens included.
  int64_t vocab_size() const { return vocab_size_; }
  int32_t end_of_text() const { return end_of_text_; }
  const std::string& end_of_text_string() const { return parts_.end_of_text; }
  const std::string& name() const { return parts_.name; }
  // The split pattern of tiktoken's family (the first pre-tokenizer step's).
  const std::string& pattern() const;
  // Every added token: content -> id.
  const std::map<std::string, int32_t>& special_tokens() const { return special_tokens_; }
  const TokenTable& ranks() const { return parts_.vocab; }
  const TokenizerParts& parts() const { return parts_; }
  const AddedTokens& added() const { return added_; }
  // True when a .tiktoken file and its sidecar hold all of it (tokenizer_files.h).
  bool tiktoken_family() const;

 private:
  void validate();
  void encode_section(std::string_view text, std::vector<int32_t>& out) const;

  TokenizerParts parts_;
  PreTokenizer pre_;
  AddedTokens added_;
  std::map<std::string, int32_t> special_tokens_;
  int32_t end_of_text_ = -1;
  int64_t vocab_size_ = 0;
};

}  // namespace difftx::data
