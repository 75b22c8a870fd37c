#include "infer/bad_words.h"

#include <algorithm>

namespace difftx::infer {

void bad_word_ends(std::span<const std::vector<int32_t>> words, std::span<const int32_t> generated,
                   std::vector<int32_t>& out) {
  for (const std::vector<int32_t>& word : words) {
    const size_t before = word.size() - 1;  // the tokens that must end `generated`
    if (before <= generated.size() && std::equal(word.begin(), word.end() - 1, generated.end() - before))
      out.push_back(word.back());
  }
}

}  // namespace difftx::infer
