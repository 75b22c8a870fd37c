#include "data/tokenizer.h"

#include <algorithm>

#include "core/error.h"
#include "data/bpe.h"
#include "data/utf8.h"

namespace difftx::data {
namespace {

TokenizerParts tiktoken_parts(std::string name, TokenTable ranks, const std::string& pattern,
                              const std::map<std::string, int32_t>& special_tokens,
                              const std::string& end_of_text) {
  TokenizerParts p;
  p.name = std::move(name);
  p.vocab = std::move(ranks);
  p.pre_tokenizer.push_back(SplitStep{SplitPattern(pattern, SplitPattern::Mode::covering)});
  for (const auto& [text, id] : special_tokens) p.added.push_back(AddedToken{text, id});
  p.end_of_text = end_of_text;
  return p;
}

}  // namespace

Tokenizer::Tokenizer(std::string name, TokenTable ranks, const std::string& pattern,
                     std::map<std::string, int32_t> special_tokens, const std::string& end_of_text)
    : Tokenizer(tiktoken_parts(std::move(name), std::move(ranks), pattern, special_tokens, end_of_text)) {}

Tokenizer::Tokenizer(TokenizerParts parts) : parts_(std::move(parts)), pre_(parts_.pre_tokenizer) {
  validate();
}

void Tokenizer::validate() {
  const std::string& name = parts_.name;
  const TokenTable& vocab = parts_.vocab;
  for (int b = 0; b < 256; ++b)
    DIFFTX_CHECK(vocab.byte_rank(static_cast<unsigned char>(b)) >= 0, "tokenizer ", name,
                 ": no token for the byte 0x", "0123456789ABCDEF"[b >> 4], "0123456789ABCDEF"[b & 15],
                 " (a byte-level BPE needs all 256 single bytes)");
  vocab_size_ = vocab.rank_end();
  for (const AddedToken& t : parts_.added) {
    DIFFTX_CHECK(!t.content.empty(), "tokenizer ", name, ": a special token is the empty string");
    DIFFTX_CHECK(t.id >= 0, "tokenizer ", name, ": special token ", t.content, " has negative id ", t.id);
    DIFFTX_CHECK(!vocab.has_rank(t.id) || vocab.bytes_of(t.id) == t.content, "tokenizer ", name,
                 ": special token ", t.content, " has id ", t.id,
                 ", which is already the rank of an ordinary token");
    const auto [it, inserted] = special_tokens_.emplace(t.content, t.id);
    DIFFTX_CHECK(inserted, "tokenizer ", name, ": special token ", t.content, " appears twice");
    vocab_size_ = std::max<int64_t>(vocab_size_, int64_t{t.id} + 1);
  }
  added_ = AddedTokens(parts_.added, "tokenizer " + name);
  const AddedToken* eot = added_.by_content(parts_.end_of_text);
  DIFFTX_CHECK(eot != nullptr, "tokenizer ", name, ": no special token ", parts_.end_of_text,
               " (the end-of-text token that separates documents)");
  end_of_text_ = eot->id;
  for (const auto* ids : {&parts_.prefix, &parts_.suffix})
    for (int32_t id : *ids)
      DIFFTX_CHECK(vocab.has_rank(id) || added_.by_id(id) != nullptr, "tokenizer ", name,
                   ": the template adds id ", id, ", which is not a token");
}

const std::string& Tokenizer::pattern() const {
  static const std::string none;
  return parts_.pre_tokenizer.empty() ? none : parts_.pre_tokenizer.front().pattern.pattern();
}

bool Tokenizer::tiktoken_family() const {
  if (parts_.merges || parts_.normalization != Normalization::none || !parts_.whole_piece_first ||
      parts_.pre_tokenizer.size() != 1 ||
      parts_.pre_tokenizer[0].pattern.mode() != SplitPattern::Mode::covering ||
      !parts_.prefix.empty() || !parts_.suffix.empty())
    return false;
  return std::all_of(parts_.added.begin(), parts_.added.end(), [&](const AddedToken& t) {
    return t.special && !t.lstrip && !t.rstrip && !parts_.vocab.has_rank(t.id);
  });
}

void Tokenizer::encode_section(std::string_view text, std::vector<int32_t>& out) const {
  std::string buffer;
  const std::string_view normal = normalize(parts_.normalization, text, buffer);
  const MergeRule rule{parts_.vocab, parts_.merges ? &*parts_.merges : nullptr};
  pre_.split(normal, [&](std::string_view piece) {
    if (parts_.whole_piece_first) {
      const int32_t whole = parts_.vocab.find(piece);
      if (whole >= 0) return out.push_back(whole);
    }
    bpe_encode(rule, piece, out);
  });
}

void Tokenizer::encode_append(std::string_view text, std::vector<int32_t>& out,
                              Specials specials) const {
  if (valid_utf8_prefix(text) != text.size()) check_utf8(text, "tokenizer " + parts_.name + ": encode");
  const bool with_special = specials == Specials::allowed;
  size_t pos = 0;
  while (pos < text.size()) {
    const auto match = added_.find(text, pos, with_special);
    if (!match) {
      encode_section(text.substr(pos), out);
      break;
    }
    encode_section(text.substr(pos, match->begin - pos), out);
    out.push_back(match->token->id);
    pos = match->end;
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, Specials specials) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 8);
  encode_append(text, out, specials);
  return out;
}

std::vector<int32_t> Tokenizer::add_template(std::span<const int32_t> ids) const {
  std::vector<int32_t> out(parts_.prefix);
  out.insert(out.end(), ids.begin(), ids.end());
  out.insert(out.end(), parts_.suffix.begin(), parts_.suffix.end());
  return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (parts_.vocab.has_rank(id)) {
      out.append(parts_.vocab.bytes_of(id));
      continue;
    }
    const AddedToken* added = added_.by_id(id);
    DIFFTX_CHECK(added != nullptr, "tokenizer ", parts_.name, ": decode: id ", id, " at position ", i,
                 " is not a token (vocab size ", vocab_size_, ")");
    out.append(added->content);
  }
  return out;
}

}  // namespace difftx::data
