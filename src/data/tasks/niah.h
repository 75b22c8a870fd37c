// Multi-needle retrieval tasks (paper §3.4, Table 2): N needles "The magic number for <key> is
// <value>." hidden at chosen depths in a haystack of real corpus text, then R of them asked
// for. One task is one token sequence that already holds the answers (teacher forcing), so a
// single forward pass grades it (exact_match.h).
//
// Templates (each piece between bars encoded on its own by the dataset's tokenizer and the ids
// concatenated, so needle and query hold the same value ids and the answer is a copy):
//   needle i      " The magic number for KEY_i is " | VALUE_i | "."
//   query block   "\n" | then, for each queried needle in asking order,
//                 " The magic number for KEY is " | VALUE | "."
// KEY: one of needle_keys(), distinct within a task. VALUE: value_digits decimal digits without
// a leading zero, distinct within a task. The haystack is a contiguous slice of one split's token
// stream (so documents and their end-of-text tokens appear as in training); needles are inserted
// between its tokens. The sequence is exactly `context` ids:
//   haystack-with-needles | query block (answers included)
// Depth d puts every queried needle before haystack token round(d H), H = haystack tokens
// (d = 0: first in the sequence, d = 1: right before the query block), in random order next to
// each other; the other needles go before uniformly random haystack tokens.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/split_reader.h"
#include "data/tokenizer.h"

namespace difftx::retrieval {

// Positions [begin, end) in a task's token sequence.
struct Span {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

inline constexpr const char* kNeedleLead = " The magic number for ";  // then KEY, then:
inline constexpr const char* kNeedleMiddle = " is ";
inline constexpr const char* kNeedleEnd = ".";
inline constexpr const char* kQueryIntro = "\n";
inline constexpr int kDefaultValueDigits = 3;

// 48 common nouns, each a single token in data/default's bpe-8192 (other tokenizers may split
// them; nothing depends on it). N can be at most their number.
std::span<const std::string_view> needle_keys();

struct NiahSpec {
  int64_t context = 256;  // ids in the whole sequence
  int64_t needles = 1;    // N
  int64_t queried = 1;    // R, 1 <= R <= N
  double depth = 0.5;     // of the queried needles, in [0, 1]
  int value_digits = kDefaultValueDigits;
};

struct NiahNeedle {
  std::string key, value;
  Span needle;              // the whole needle in the sequence
  Span value_span;          // its value: the "answer span" the attention analysis measures
  int64_t haystack_offset;  // haystack tokens before it
  bool queried;
};

struct NiahQuery {
  int64_t needle;  // index into NiahSample::needles
  Span answer;     // the value's ids in the query block; tokens[answer] == tokens[needle's value_span]
};

struct NiahSample {
  std::vector<int32_t> tokens;     // exactly spec.context ids
  int64_t haystack_tokens = 0;     // H
  int64_t haystack_start = 0;      // where the haystack was cut from the split's stream
  std::vector<NiahNeedle> needles; // in sequence order
  std::vector<NiahQuery> queries;  // in asking order
  // The prompt a generator would be given: everything before the first answer.
  int64_t prompt_length() const { return queries.front().answer.begin; }
};

// Draws tasks from one split of a prepared dataset with its tokenizer (both must outlive it).
class NiahGenerator {
 public:
  NiahGenerator(const data::Tokenizer& tokenizer, const data::SplitReader& haystack);

  // The same (spec, seed) gives the same sample. Errors (validate) before any drawing.
  NiahSample sample(const NiahSpec& spec, uint64_t seed) const;

  // Errors name the offending value: N < 1 or past the keys, R outside [1, N], depth outside
  // [0, 1], value_digits outside [1, 9] or with fewer values than needles, a context too short
  // for the needles and queries (their most tokens, every digit a token, plus one haystack
  // token), a split shorter than the haystack.
  void validate(const NiahSpec& spec) const;
  // Most ids the needles and the query block of spec can take (longest keys, one id a digit).
  int64_t max_task_tokens(int64_t needles, int64_t queried, int value_digits) const;

  const data::Tokenizer& tokenizer() const { return tokenizer_; }
  const data::SplitReader& haystack() const { return haystack_; }

 private:
  const data::Tokenizer& tokenizer_;
  const data::SplitReader& haystack_;
  std::vector<std::vector<int32_t>> lead_;  // per key: the ids of kNeedleLead + KEY + kNeedleMiddle
  std::vector<int32_t> end_, intro_;
};

}  // namespace difftx::retrieval
