// Writing tokenizer.json and tokenizer_config.json (hf_tokenizer.h).
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/byte_level.h"
#include "data/encodings.h"
#include "data/hf_tokenizer.h"
#include "io/atomic_file.h"

namespace difftx::data {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::ordered_json;

// tiktoken's patterns use possessive quantifiers and '(?i:[sdmt]|...)', which JavaScript's
// RegExp (transformers.js) cannot compile. These spellings match the same pieces (checked by
// tests/data/hf_tokenizer_test.cpp on varied text): a possessive quantifier here is never
// followed by anything its backtracking could let match, and the contraction group is spelt
// the way transformers.js rewrites.
std::string portable_pattern(const std::string& pattern) {
  static const std::vector<std::pair<std::string, std::string>> known = {
      {default_training_pattern(),  // cl100k_base's
       R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s)"},
      {builtin_encoding("r50k_base")->pattern,
       R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+$|\s+(?!\S)|\s)"},
  };
  for (const auto& [from, to] : known)
    if (pattern == from) return to;
  return pattern;
}

json merge_list(const Tokenizer& tokenizer) {
  const TokenTable& vocab = tokenizer.ranks();
  json merges = json::array();
  for (const auto& [left, right] : bpe_merge_pairs(tokenizer))
    merges.push_back(json::array({byte_level_encode(vocab.bytes_of(left)), byte_level_encode(vocab.bytes_of(right))}));
  return merges;
}

constexpr const char* kVocabPlaceholder = "@@difftx vocab@@";

// The vocab object as JSON text: plain json (a std::map, sorted keys), because an ordered_json
// object inserts in linear time per key.
std::string vocab_text(const TokenTable& vocab) {
  nlohmann::json v = nlohmann::json::object();
  for (int32_t r = 0; r < vocab.rank_end(); ++r)
    if (vocab.has_rank(r)) v[byte_level_encode(vocab.bytes_of(r))] = r;
  return v.dump();
}

json model_section(const Tokenizer& tokenizer) {
  json model = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", tokenizer.parts().whole_piece_first}};
  model["vocab"] = kVocabPlaceholder;  // vocab_text() replaces it
  model["merges"] = merge_list(tokenizer);
  return model;
}

json pre_tokenizer_section(const Tokenizer& tokenizer) {
  json steps = json::array();
  for (const SplitStep& s : tokenizer.parts().pre_tokenizer)
    steps.push_back({{"type", "Split"},
                     {"pattern", {{"Regex", portable_pattern(s.pattern.pattern())}}},
                     {"behavior", name_of(kSplitBehaviorNames, s.behavior)},
                     {"invert", s.invert}});
  steps.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}});
  return {{"type", "Sequence"}, {"pretokenizers", steps}};
}

json template_section(const Tokenizer& tokenizer) {
  const TokenizerParts& p = tokenizer.parts();
  if (p.prefix.empty() && p.suffix.empty())
    return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  json single = json::array(), specials = json::object();
  auto special = [&](int32_t id) {
    const std::string name = tokenizer.decode({&id, 1});
    single.push_back({{"SpecialToken", {{"id", name}, {"type_id", 0}}}});
    specials[name] = {{"id", name}, {"ids", {id}}, {"tokens", {name}}};
  };
  for (int32_t id : p.prefix) special(id);
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  for (int32_t id : p.suffix) special(id);
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", single}, {"special_tokens", specials}};
}

json added_tokens_section(const Tokenizer& tokenizer) {
  json added = json::array();
  for (const AddedToken& t : tokenizer.parts().added)
    added.push_back({{"id", t.id}, {"content", t.content}, {"single_word", false}, {"lstrip", t.lstrip},
                     {"rstrip", t.rstrip}, {"normalized", false}, {"special", t.special}});
  return added;
}

json config_file(const Tokenizer& tokenizer) {
  const TokenizerParts& p = tokenizer.parts();
  json config = {{"tokenizer_class", "PreTrainedTokenizerFast"},
                 {"eos_token", p.end_of_text},
                 {"clean_up_tokenization_spaces", false},
                 {"model_max_length", 1000000000000000019884624838656.0}};
  // BOS and EOS come from tokenizer.json's template; bos_token names the first for readers.
  if (!p.prefix.empty()) config["bos_token"] = tokenizer.decode({p.prefix.data(), 1});
  json decoder = json::object();
  for (const AddedToken& t : p.added)
    decoder[std::to_string(t.id)] = {{"content", t.content}, {"lstrip", t.lstrip}, {"normalized", false},
                                     {"rstrip", t.rstrip}, {"single_word", false}, {"special", t.special}};
  config["added_tokens_decoder"] = decoder;
  return config;
}

}  // namespace

std::vector<std::pair<int32_t, int32_t>> bpe_merge_pairs(const Tokenizer& tokenizer) {
  const TokenTable& vocab = tokenizer.ranks();
  std::vector<std::pair<int32_t, int32_t>> merges;
  if (tokenizer.parts().merges) {
    for (const auto& m : tokenizer.parts().merges->in_rank_order()) merges.emplace_back(m.left, m.right);
    return merges;
  }
  for (int32_t r = 0; r < vocab.rank_end(); ++r) {
    const std::string_view bytes = vocab.bytes_of(r);
    for (size_t k = 1; k < bytes.size(); ++k) {
      const int32_t left = vocab.find(bytes.substr(0, k)), right = vocab.find(bytes.substr(k));
      if (left >= 0 && right >= 0) merges.emplace_back(left, right);
    }
  }
  return merges;
}

void write_hf_tokenizer(const Tokenizer& tokenizer, const fs::path& dir) {
  const TokenizerParts& p = tokenizer.parts();
  std::error_code ec;
  fs::create_directories(dir, ec);
  DIFFTX_CHECK(!ec, dir.string(), ": cannot create directory (", ec.message(), ")");
  json j = {{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}};
  j["added_tokens"] = added_tokens_section(tokenizer);
  j["normalizer"] = p.normalization == Normalization::nfc ? json{{"type", "NFC"}} : json(nullptr);
  j["pre_tokenizer"] = pre_tokenizer_section(tokenizer);
  j["post_processor"] = template_section(tokenizer);
  j["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}};
  j["model"] = model_section(tokenizer);
  std::string text = j.dump(1) + "\n";
  const std::string placeholder = std::string("\"") + kVocabPlaceholder + "\"";
  text.replace(text.find(placeholder), placeholder.size(), vocab_text(p.vocab));
  io::write_file_atomically(dir / kHfTokenizerFile, text);
  io::write_file_atomically(dir / kHfTokenizerConfigFile, config_file(tokenizer).dump(2) + "\n");
}

}  // namespace difftx::data
