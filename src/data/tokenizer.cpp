#include "data/tokenizer.h"

#include <algorithm>

#include "core/error.h"
#include "data/bpe.h"
#include "data/utf8.h"

namespace difftx::data {

Tokenizer::Tokenizer(std::string name, TokenTable ranks, const std::string& pattern,
                     std::map<std::string, int32_t> special_tokens,
                     const std::string& end_of_text)
    : name_(std::move(name)),
      ranks_(std::move(ranks)),
      split_(pattern),
      special_tokens_(std::move(special_tokens)),
      end_of_text_string_(end_of_text) {
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    DIFFTX_CHECK(ranks_.find(&byte, 1) >= 0, "tokenizer ", name_, ": no token for the byte 0x",
                 "0123456789ABCDEF"[b >> 4], "0123456789ABCDEF"[b & 15],
                 " (a byte-level BPE needs all 256 single bytes)");
  }
  vocab_size_ = ranks_.rank_end();
  for (const auto& [text, id] : special_tokens_) {
    DIFFTX_CHECK(!text.empty(), "tokenizer ", name_, ": a special token is the empty string");
    DIFFTX_CHECK(id >= 0, "tokenizer ", name_, ": special token ", text, " has negative id ", id);
    DIFFTX_CHECK(!ranks_.has_rank(id), "tokenizer ", name_, ": special token ", text, " has id ",
                 id, ", which is already the rank of an ordinary token");
    DIFFTX_CHECK(special_by_id_.emplace(id, text).second, "tokenizer ", name_,
                 ": special tokens ", special_by_id_[id], " and ", text, " share id ", id);
    vocab_size_ = std::max<int64_t>(vocab_size_, int64_t{id} + 1);
  }
  auto eot = special_tokens_.find(end_of_text_string_);
  DIFFTX_CHECK(eot != special_tokens_.end(), "tokenizer ", name_, ": no special token ",
               end_of_text_string_, " (the end-of-text token that separates documents)");
  end_of_text_ = eot->second;
}

void Tokenizer::encode_ordinary(std::string_view text, std::vector<int32_t>& out) const {
  split_.split(text, [&](std::string_view piece) {
    const int32_t whole = ranks_.find(piece);
    if (whole >= 0)
      out.push_back(whole);
    else
      bpe_encode(ranks_, piece, out);
  });
}

void Tokenizer::encode_append(std::string_view text, std::vector<int32_t>& out,
                              Specials specials) const {
  if (valid_utf8_prefix(text) != text.size()) check_utf8(text, "tokenizer " + name_ + ": encode");
  if (specials == Specials::as_text || special_tokens_.empty()) return encode_ordinary(text, out);
  // Cut the text at each special token (the earliest; the longest when two start together).
  size_t pos = 0;
  while (pos < text.size()) {
    size_t best_at = std::string_view::npos;
    const std::pair<const std::string, int32_t>* best = nullptr;
    for (const auto& entry : special_tokens_) {
      const size_t at = text.find(entry.first, pos);
      if (at < best_at || (at == best_at && at != std::string_view::npos &&
                           entry.first.size() > best->first.size())) {
        best_at = at;
        best = &entry;
      }
    }
    if (best == nullptr) {
      encode_ordinary(text.substr(pos), out);
      break;
    }
    encode_ordinary(text.substr(pos, best_at - pos), out);
    out.push_back(best->second);
    pos = best_at + best->first.size();
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, Specials specials) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 8);
  encode_append(text, out, specials);
  return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (ranks_.has_rank(id)) {
      out.append(ranks_.bytes_of(id));
      continue;
    }
    auto special = special_by_id_.find(id);
    DIFFTX_CHECK(special != special_by_id_.end(), "tokenizer ", name_, ": decode: id ", id,
                 " at position ", i, " is not a token (vocab size ", vocab_size_, ")");
    out.append(special->second);
  }
  return out;
}

}  // namespace difftx::data
