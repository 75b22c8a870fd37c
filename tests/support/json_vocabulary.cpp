#include "support/json_vocabulary.h"

#include <vector>

#include "grammar/json_grammar.h"

namespace difftx::testing {

std::shared_ptr<const grammar::TokenVocabulary> json_vocabulary() {
  std::vector<std::string> bytes;
  for (int c = 32; c < 127; ++c) bytes.emplace_back(1, static_cast<char>(c));
  for (const char* c : {"\n", "\xc3", "\xa9"}) bytes.emplace_back(c);
  for (const char* t : {"{\"", "\":", "\", \"", "\"}", "true", "false", "null", "12", "00", "ab", "\"a\"", "\"b\"",
                        "\": \"", "},", "[{", "}]", "<think>", "</think>", "\n\n", "é", "x\"", "\"c\"", "34"})
    bytes.emplace_back(t);
  while (bytes.size() < kJsonEos) bytes.emplace_back("zz" + std::to_string(bytes.size()));
  bytes.emplace_back("<eos>");
  std::vector<bool> control(bytes.size(), false);
  control[kJsonEos] = true;
  return std::make_shared<grammar::TokenVocabulary>(std::move(bytes), std::move(control));
}

std::shared_ptr<const grammar::GrammarConstraintSource> schema_constraint(
    const nlohmann::ordered_json& schema, const std::shared_ptr<const grammar::TokenVocabulary>& vocabulary) {
  grammar::ConstraintSpec spec;
  spec.vocabulary = vocabulary;
  spec.grammar = std::make_shared<grammar::TokenMasks>(grammar::json_schema_grammar(schema), vocabulary);
  return std::make_shared<grammar::GrammarConstraintSource>(spec);
}

std::string text_of(const Stream& s, const grammar::TokenVocabulary& vocabulary) {
  std::string out;
  for (int32_t id : s.ids()) out += vocabulary.bytes(id);
  return out;
}

}  // namespace difftx::testing
