// The bytes each token of a vocabulary writes, and a trie over the text tokens' bytes: what a
// token mask (token_masks.h) walks against a grammar's automaton. Control tokens (special added
// tokens such as <|eot_id|>) are not in the trie: a grammar writes one only where its spec
// names it (a tool-call marker), and stop tokens are the constraint's to allow. Nor are text
// tokens holding bytes that never occur in UTF-8 (0xF5 to 0xFF: grammar.h's control bytes).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace difftx::data {
class Tokenizer;
}

namespace difftx::grammar {

class TokenVocabulary {
 public:
  // bytes[i]: what token i writes (empty: nothing, never allowed); control[i]: a control token.
  TokenVocabulary(std::vector<std::string> bytes, std::vector<bool> control);
  // Tokens [0, size) of a tokenizer; ids it does not have write nothing.
  static std::shared_ptr<const TokenVocabulary> of(const data::Tokenizer& tokenizer, int64_t size);

  int64_t size() const { return static_cast<int64_t>(bytes_.size()); }
  int64_t words() const { return (size() + 63) / 64; }  // of a mask
  std::string_view bytes(int32_t id) const { return bytes_[id]; }
  bool control(int32_t id) const { return control_[id]; }

  // Sets bit i of `mask` for every text token i whose bytes take the automaton from `start` to a
  // live state, step(state, byte) giving the next state (< 0: refused). Subtrees behind a refused
  // byte are skipped, so the cost is the size of the part of the trie the grammar allows.
  template <class Step>
  void walk(int32_t start, Step&& step, uint64_t* mask) const {
    std::vector<int32_t> state(static_cast<size_t>(max_depth_) + 1);
    state[0] = start;
    for (size_t i = 0; i < byte_.size();) {
      const int32_t s = step(state[depth_[i] - 1], byte_[i]);
      if (s < 0) {
        i = skip_[i];
        continue;
      }
      state[depth_[i]] = s;
      for (int32_t k = token_begin_[i]; k < token_begin_[i + 1]; ++k)
        mask[ids_[k] >> 6] |= uint64_t{1} << (ids_[k] & 63);
      ++i;
    }
  }

 private:
  std::vector<std::string> bytes_;
  std::vector<bool> control_;
  // The trie in preorder: node i has byte_[i] at depth_[i] (1 for first bytes), its subtree ends
  // before skip_[i], and the tokens ending at it are ids_[token_begin_[i], token_begin_[i + 1]).
  std::vector<uint8_t> byte_;
  std::vector<int32_t> depth_, skip_, token_begin_, ids_;
  int32_t max_depth_ = 0;
};

}  // namespace difftx::grammar
