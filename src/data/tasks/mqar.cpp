#include "data/tasks/mqar.h"

#include "core/error.h"
#include "data/tasks/random_draws.h"

namespace difftx::retrieval {
namespace {

constexpr int32_t kFirstNonByte = 256;

}  // namespace

MqarVocabulary mqar_vocabulary(const data::Tokenizer& tokenizer) {
  const int32_t ordinary = tokenizer.ranks().rank_end();
  DIFFTX_CHECK(ordinary >= kFirstNonByte + 2, "MQAR: tokenizer ", tokenizer.name(), " has ", ordinary,
               " ordinary tokens; keys and values need at least 2 beyond the ", kFirstNonByte, " single bytes");
  MqarVocabulary v;
  v.end_of_text = tokenizer.end_of_text();
  v.first_key = kFirstNonByte;
  v.first_value = kFirstNonByte + (ordinary - kFirstNonByte) / 2;
  v.end = ordinary;
  return v;
}

void validate_mqar(const MqarSpec& s, const MqarVocabulary& v) {
  DIFFTX_CHECK(s.pairs >= 1, "MQAR: pairs P = ", s.pairs, " must be positive");
  DIFFTX_CHECK(s.queries >= 1 && s.queries <= s.pairs, "MQAR: queries Q = ", s.queries, " must be in [1, P = ",
               s.pairs, "]");
  const int64_t pool = std::min(v.first_value - v.first_key, v.end - v.first_value);
  DIFFTX_CHECK(s.pairs <= pool, "MQAR: P = ", s.pairs, " pairs need that many distinct keys and values, but the pools hold ",
               pool);
}

void append_mqar_episode(const MqarSpec& s, const MqarVocabulary& v, Rng& rng, MqarSample& out) {
  validate_mqar(s, v);
  const std::vector<int64_t> keys = draw_distinct(rng, v.first_value - v.first_key, s.pairs);
  const std::vector<int64_t> values = draw_distinct(rng, v.end - v.first_value, s.pairs);
  auto& t = out.tokens;
  t.push_back(v.end_of_text);
  for (int64_t i = 0; i < s.pairs; ++i) {
    t.push_back(static_cast<int32_t>(v.first_key + keys[i]));
    t.push_back(static_cast<int32_t>(v.first_value + values[i]));
  }
  std::vector<int64_t> asked = shuffled(rng, s.pairs);
  asked.resize(s.queries);
  for (int64_t i : asked) {
    t.push_back(static_cast<int32_t>(v.first_key + keys[i]));
    out.answers.push_back(static_cast<int64_t>(t.size()));
    t.push_back(static_cast<int32_t>(v.first_value + values[i]));
  }
}

MqarSample make_mqar_sample(const MqarSpec& spec, const MqarVocabulary& vocab, uint64_t seed) {
  Rng rng(seed);
  MqarSample out;
  append_mqar_episode(spec, vocab, rng, out);
  return out;
}

}  // namespace difftx::retrieval
