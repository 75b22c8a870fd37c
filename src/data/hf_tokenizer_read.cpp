// Reading tokenizer.json (hf_tokenizer.h). Each section of the file has its reader below.
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/error.h"
#include "data/byte_level.h"
#include "data/hf_tokenizer.h"
#include "io/json_file.h"

namespace difftx::data {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

// Ids above this are refused: tables are indexed by id, and a hostile file must not make us
// allocate gigabytes (the same bound as .tiktoken ranks).
constexpr int64_t kMaxId = (1 << 24) - 1;

// "FILE: KEY" for messages.
struct Where {
  std::string file;
  std::string at(const std::string& key) const { return file + ": " + key; }
};

// The readers below recurse into Sequence steps: a hostile file must not nest them deeply
// enough to exhaust the stack. Checked without recursion.
void check_nesting(const json& root, const std::string& where) {
  constexpr size_t kMaxDepth = 64;
  std::vector<std::pair<const json*, size_t>> stack = {{&root, 1}};
  while (!stack.empty()) {
    const auto [j, depth] = stack.back();
    stack.pop_back();
    DIFFTX_CHECK(depth <= kMaxDepth, where, ": JSON nested deeper than ", kMaxDepth, " levels");
    if (j->is_structured())
      for (const json& child : *j)
        if (child.is_structured()) stack.push_back({&child, depth + 1});
  }
}

const json& member(const json& j, const char* key, const std::string& where) {
  DIFFTX_CHECK(j.is_object() && j.contains(key), where, ": missing key \"", key, "\"");
  return j[key];
}

std::string type_of(const json& j, const std::string& where) {
  const json& t = member(j, "type", where);
  DIFFTX_CHECK(t.is_string(), where, ".type: expected a string");
  return t.get<std::string>();
}

bool flag(const json& j, const char* key, bool fallback, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  DIFFTX_CHECK(j[key].is_boolean(), where, ".", key, ": expected true or false");
  return j[key].get<bool>();
}

int32_t read_id(const json& j, const std::string& where) {
  DIFFTX_CHECK(j.is_number_integer() && j.get<int64_t>() >= 0 && j.get<int64_t>() <= kMaxId, where,
               ": expected an integer id in [0, ", kMaxId, "], got ", j.dump().substr(0, 40));
  return j.get<int32_t>();
}

Normalization read_normalizer(const json& j, const std::string& where) {
  if (j.is_null()) return Normalization::none;
  const std::string type = type_of(j, where);
  if (type == "NFC") return Normalization::nfc;
  if (type == "Sequence") {
    const json& list = member(j, "normalizers", where);
    DIFFTX_CHECK(list.is_array() && list.size() <= 1, where,
                 ".normalizers: expected at most one normalizer (NFC)");
    return list.empty() ? Normalization::none : read_normalizer(list[0], where + ".normalizers[0]");
  }
  fail(where, ": normalizer type \"", type, "\" is not supported (supported: NFC)");
}

SplitBehavior read_behavior(const json& j, const std::string& where) {
  DIFFTX_CHECK(j.is_string(), where, ": expected a string");
  const std::string b = j.get<std::string>();
  if (const auto behavior = value_named(kSplitBehaviorNames, b)) return *behavior;
  fail(where, ": unknown behavior \"", b,
       "\" (expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous)");
}

SplitStep read_split(const json& j, const std::string& where) {
  const json& pattern = member(j, "pattern", where);
  std::string regex;
  if (pattern.contains("Regex") && pattern["Regex"].is_string()) {
    regex = pattern["Regex"].get<std::string>();
  } else if (pattern.contains("String") && pattern["String"].is_string()) {
    const std::string literal = pattern["String"].get<std::string>();
    DIFFTX_CHECK(!literal.empty(), where, ".pattern.String: empty");
    for (char c : literal) {  // PCRE2 treats a backslash before any non-alphanumeric as literal
      if (!std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 0x80) regex += '\\';
      regex += c;
    }
  } else {
    fail(where, ".pattern: expected {\"Regex\": STRING} or {\"String\": STRING}");
  }
  try {
    return SplitStep{SplitPattern(regex, SplitPattern::Mode::searching),
                     read_behavior(member(j, "behavior", where), where + ".behavior"),
                     flag(j, "invert", false, where)};
  } catch (const Error& e) {
    fail(where, ".pattern: ", e.what());
  }
}

void read_pre_tokenizer(const json& j, const std::string& where, std::vector<SplitStep>& steps) {
  DIFFTX_CHECK(!j.is_null(), where, ": missing (a byte-level BPE needs a ByteLevel pre-tokenizer)");
  const std::string type = type_of(j, where);
  if (type == "Sequence") {
    const json& list = member(j, "pretokenizers", where);
    DIFFTX_CHECK(list.is_array(), where, ".pretokenizers: expected an array");
    for (size_t i = 0; i < list.size(); ++i)
      read_pre_tokenizer(list[i], where + ".pretokenizers[" + std::to_string(i) + "]", steps);
  } else if (type == "Split") {
    steps.push_back(read_split(j, where));
  } else if (type == "ByteLevel") {
    DIFFTX_CHECK(!flag(j, "add_prefix_space", false, where), where,
                 ".add_prefix_space: true is not supported");
    if (flag(j, "use_regex", true, where))
      steps.push_back(SplitStep{SplitPattern(gpt2_pattern(), SplitPattern::Mode::searching)});
  } else {
    fail(where, ": pre-tokenizer type \"", type,
         "\" is not supported (supported: ByteLevel, Split, Sequence of them)");
  }
}

bool has_byte_level(const json& j) {
  if (j.is_null() || !j.is_object()) return false;
  if (j.value("type", json()) == "ByteLevel") return true;
  for (const char* list : {"pretokenizers", "decoders"})
    if (j.contains(list) && j[list].is_array())
      for (const json& e : j[list])
        if (has_byte_level(e)) return true;
  return false;
}

void check_decoder(const json& j, const std::string& where) {
  DIFFTX_CHECK(!j.is_null(), where, ": missing (expected a ByteLevel decoder)");
  const std::string type = type_of(j, where);
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    const json& list = member(j, "decoders", where);
    DIFFTX_CHECK(list.is_array(), where, ".decoders: expected an array");
    for (size_t i = 0; i < list.size(); ++i) check_decoder(list[i], where + ".decoders[" + std::to_string(i) + "]");
    return;
  }
  fail(where, ": decoder type \"", type, "\" is not supported (supported: ByteLevel)");
}

// The token a vocab or merge string stands for, as bytes.
std::string token_bytes(const std::string& text, const std::string& where) {
  auto bytes = byte_level_decode(text);
  DIFFTX_CHECK(bytes.has_value() && !bytes->empty(), where, ": token '", text.substr(0, 60),
               "' is not a string of the byte-level alphabet (difftx reads byte-level BPE only)");
  return std::move(*bytes);
}

void read_vocab(const json& j, const std::string& where, TokenTable& vocab) {
  DIFFTX_CHECK(j.is_object() && !j.empty(), where, ": expected a non-empty object (token -> id)");
  for (const auto& [text, id_json] : j.items()) {
    const int32_t id = read_id(id_json, where + "[\"" + text.substr(0, 60) + "\"]");
    DIFFTX_CHECK(!vocab.has_rank(id), where, ": id ", id, " is given to two tokens ('",
                 text.substr(0, 60), "' and another)");
    DIFFTX_CHECK(vocab.insert(token_bytes(text, where), id), where, ": token '", text.substr(0, 60),
                 "' appears twice");
  }
}

// One merge, as "LEFT RIGHT" (tokenizers before 0.20) or ["LEFT", "RIGHT"].
std::pair<std::string, std::string> merge_pair(const json& m, const std::string& where) {
  if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
    return {m[0].get<std::string>(), m[1].get<std::string>()};
  DIFFTX_CHECK(m.is_string(), where, ": expected \"LEFT RIGHT\" or [\"LEFT\", \"RIGHT\"]");
  const std::string s = m.get<std::string>();
  const size_t space = s.find(' ');
  DIFFTX_CHECK(space != std::string::npos && s.find(' ', space + 1) == std::string::npos, where,
               ": expected two tokens separated by one space, got '", s.substr(0, 60), "'");
  return {s.substr(0, space), s.substr(space + 1)};
}

PairMerges read_merges(const json& j, const std::string& where, const TokenTable& vocab) {
  DIFFTX_CHECK(j.is_array(), where, ": expected an array");
  DIFFTX_CHECK(j.size() <= static_cast<size_t>(kMaxId), where, ": ", j.size(), " merges (at most ", kMaxId, ")");
  PairMerges merges;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const auto [left_text, right_text] = merge_pair(j[i], at);
    const std::string left = token_bytes(left_text, at), right = token_bytes(right_text, at);
    const int32_t l = vocab.find(left), r = vocab.find(right), m = vocab.find(left + right);
    DIFFTX_CHECK(l >= 0 && r >= 0, at, ": '", (l < 0 ? left_text : right_text).substr(0, 60),
                 "' is not in the vocabulary");
    DIFFTX_CHECK(m >= 0, at, ": the merged token '", (left_text + right_text).substr(0, 60),
                 "' is not in the vocabulary");
    merges.set(l, r, static_cast<int32_t>(i), m);
  }
  return merges;
}

void read_model(const json& j, const std::string& where, TokenizerParts& parts) {
  const std::string type = type_of(j, where);
  DIFFTX_CHECK(type == "BPE", where, ": model type \"", type,
               "\" is not supported (difftx reads byte-level BPE; Unigram, WordPiece and WordLevel are not)");
  DIFFTX_CHECK(!flag(j, "byte_fallback", false, where), where,
               ".byte_fallback: true (SentencePiece-style BPE, as in Llama 2) is not supported");
  DIFFTX_CHECK(!j.contains("dropout") || j["dropout"].is_null() || j["dropout"] == 0, where,
               ".dropout: BPE dropout is not supported (expected null)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    DIFFTX_CHECK(!j.contains(key) || j[key].is_null() || j[key] == "", where, ".", key,
                 ": not supported (expected null or \"\")");
  parts.whole_piece_first = flag(j, "ignore_merges", false, where);
  read_vocab(member(j, "vocab", where), where + ".vocab", parts.vocab);
  parts.merges = read_merges(member(j, "merges", where), where + ".merges", parts.vocab);
}

void read_added_tokens(const json& j, const std::string& where, TokenizerParts& parts) {
  if (j.is_null()) return;
  DIFFTX_CHECK(j.is_array(), where, ": expected an array");
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const json& t = j[i];
    AddedToken a;
    a.id = read_id(member(t, "id", at), at + ".id");
    const json& content = member(t, "content", at);
    DIFFTX_CHECK(content.is_string() && !content.get<std::string>().empty(), at, ".content: expected a non-empty string");
    a.content = content.get<std::string>();
    a.special = flag(t, "special", false, at);
    a.lstrip = flag(t, "lstrip", false, at);
    a.rstrip = flag(t, "rstrip", false, at);
    DIFFTX_CHECK(!flag(t, "single_word", false, at), at, ".single_word: true is not supported");
    if (flag(t, "normalized", false, at) && parts.normalization != Normalization::none) {
      std::string buffer;
      DIFFTX_CHECK(normalize(parts.normalization, a.content, buffer) == a.content, at,
                   ": a normalized added token that the normalizer changes is not supported");
    }
    parts.added.push_back(std::move(a));
  }
}

int32_t added_id(const TokenizerParts& parts, const std::string& content, const std::string& where) {
  for (const AddedToken& t : parts.added)
    if (t.content == content) return t.id;
  fail(where, ": '", content.substr(0, 60), "' is not an added token");
}

// TemplateProcessing's "single" template: the special tokens before $A become the prefix, those
// after it the suffix. ByteLevel only trims offsets: nothing to do.
void read_post_processor(const json& j, const std::string& where, TokenizerParts& parts) {
  if (j.is_null()) return;
  const std::string type = type_of(j, where);
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    const json& list = member(j, "processors", where);
    DIFFTX_CHECK(list.is_array(), where, ".processors: expected an array");
    for (size_t i = 0; i < list.size(); ++i)
      read_post_processor(list[i], where + ".processors[" + std::to_string(i) + "]", parts);
    return;
  }
  DIFFTX_CHECK(type == "TemplateProcessing", where, ": post-processor type \"", type,
               "\" is not supported (supported: TemplateProcessing, ByteLevel, Sequence of them)");
  const json& single = member(j, "single", where);
  const json& specials = member(j, "special_tokens", where);
  DIFFTX_CHECK(single.is_array() && specials.is_object(), where, ": expected \"single\" to be an array and "
               "\"special_tokens\" an object");
  DIFFTX_CHECK(parts.prefix.empty() && parts.suffix.empty(), where, ": two TemplateProcessing steps");
  bool after_text = false;
  for (size_t i = 0; i < single.size(); ++i) {
    const std::string at = where + ".single[" + std::to_string(i) + "]";
    const json& piece = single[i];
    if (piece.contains("Sequence")) {
      DIFFTX_CHECK(piece["Sequence"].is_object() && piece["Sequence"].value("id", json()) == "A" && !after_text, at, ": expected one sequence $A");
      after_text = true;
      continue;
    }
    DIFFTX_CHECK(piece.contains("SpecialToken") && piece["SpecialToken"].contains("id") &&
                     piece["SpecialToken"]["id"].is_string(),
                 at, ": expected {\"SpecialToken\": {\"id\": NAME}} or {\"Sequence\": {\"id\": \"A\"}}");
    const std::string name = piece["SpecialToken"]["id"].get<std::string>();
    const json& ids = member(member(specials, name.c_str(), where + ".special_tokens"), "ids",
                             where + ".special_tokens." + name);
    DIFFTX_CHECK(ids.is_array() && ids.size() <= 16, where, ".special_tokens.", name, ".ids: expected a short array");
    for (const json& id : ids)
      (after_text ? parts.suffix : parts.prefix).push_back(read_id(id, where + ".special_tokens." + name + ".ids"));
  }
  DIFFTX_CHECK(after_text, where, ".single: no sequence $A");
}

// bos_token / eos_token: a special token (special_token_text), or absent or null; anything else
// is an error naming the key.
std::optional<std::string> token_name(const json& config, const char* key, const std::string& where) {
  if (!config.contains(key) || config[key].is_null()) return std::nullopt;
  const std::optional<std::string> text = special_token_text(config[key]);
  DIFFTX_CHECK(text.has_value(), where, ".", key, ": expected a string or {\"content\": STRING}");
  return text;
}

// tokenizer_config.json: add_bos_token / add_eos_token (when present) decide whether the
// template holds bos_token / eos_token, as transformers' LlamaTokenizerFast does. Returns
// eos_token.
std::optional<std::string> apply_config(const json& config, const std::string& where, TokenizerParts& parts) {
  DIFFTX_CHECK(config.is_object(), where, ": expected a JSON object");
  const auto set_end = [&](const char* add_key, const char* token_key, std::vector<int32_t>& ids, bool front) {
    if (!config.contains(add_key) || config[add_key].is_null()) return;
    const bool add = flag(config, add_key, false, where);
    const auto name = token_name(config, token_key, where);
    if (!name) {
      DIFFTX_CHECK(!add, where, ": ", add_key, " is true but ", token_key, " is not set");
      return;
    }
    const int32_t id = added_id(parts, *name, where + ": " + token_key);
    const bool has = !ids.empty() && (front ? ids.front() : ids.back()) == id;
    if (add && !has) ids.insert(front ? ids.begin() : ids.end(), id);
    if (!add && has) ids.erase(front ? ids.begin() : ids.end() - 1);
  };
  set_end("add_bos_token", "bos_token", parts.prefix, true);
  set_end("add_eos_token", "eos_token", parts.suffix, false);
  return token_name(config, "eos_token", where);
}

// The token that separates documents: <|endoftext|> / <|end_of_text|> when the file has one
// (Qwen's eos_token is the chat's <|im_end|>), else tokenizer_config.json's eos_token.
std::string document_end(const TokenizerParts& parts, const std::optional<std::string>& eos,
                         const std::string& where) {
  std::vector<std::string> candidates = {"<|endoftext|>", "<|end_of_text|>"};
  if (eos) candidates.push_back(*eos);
  for (const char* c : {"</s>", "<eos>"}) candidates.push_back(c);
  for (const std::string& c : candidates)
    for (const AddedToken& t : parts.added)
      if (t.content == c) return c;
  fail(where, ": no end-of-text token among the added tokens (looked for <|endoftext|>, <|end_of_text|>, "
       "tokenizer_config.json's eos_token, </s>, <eos>)");
}

}  // namespace

const std::string& gpt2_pattern() {
  static const std::string pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  return pattern;
}

std::optional<std::string> special_token_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string())
    return value["content"].get<std::string>();
  return std::nullopt;
}

namespace {

// tokenizer.json's sections into a tokenizer, with tokenizer_config.json's settings.
Tokenizer read_parts(const json& j, const std::string& where, const json& config, const std::string& config_where) {
  const auto section = [&](const char* key) { return j.contains(key) ? j[key] : json(); };
  TokenizerParts parts;
  parts.name = where;
  parts.normalization = read_normalizer(section("normalizer"), where + ": normalizer");
  read_pre_tokenizer(section("pre_tokenizer"), where + ": pre_tokenizer", parts.pre_tokenizer);
  DIFFTX_CHECK(has_byte_level(section("pre_tokenizer")), where,
               ": pre_tokenizer has no ByteLevel step (difftx reads byte-level BPE only)");
  read_model(member(j, "model", where), where + ": model", parts);
  read_added_tokens(section("added_tokens"), where + ": added_tokens", parts);
  check_decoder(section("decoder"), where + ": decoder");
  read_post_processor(section("post_processor"), where + ": post_processor", parts);
  const auto eos = apply_config(config, config_where, parts);
  parts.end_of_text = document_end(parts, eos, where);
  return Tokenizer(std::move(parts));  // its errors start with "tokenizer FILE"
}

}  // namespace

Tokenizer read_hf_tokenizer(const fs::path& file) {
  const json j = io::read_json_file(file);
  DIFFTX_CHECK(j.is_object(), file.string(), ": expected a JSON object (a Hugging Face tokenizer.json)");
  const fs::path config_file = file.parent_path() / kHfTokenizerConfigFile;
  const json config = io::read_json_object_if_present(config_file).value_or(json::object());
  return hf_tokenizer_from_json(j, file.string(), config, config_file.string());
}

Tokenizer hf_tokenizer_from_json(const json& tokenizer_json, const std::string& where, const json& config,
                                 const std::string& config_where) {
  check_nesting(tokenizer_json, where);
  try {
    return read_parts(tokenizer_json, where, config, config_where);
  } catch (const json::exception& e) {  // a value of another type than the readers above expect
    fail(where, ": malformed tokenizer.json (", io::json_error_text(e), ")");
  }
}

}  // namespace difftx::data
