// A slow tokenizer's files (hf_tokenizer.h, read_hf_slow_tokenizer) made into the tokenizer.json
// that transformers' converter for the class would make, then read as any tokenizer.json is.
#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/lines.h"
#include "data/hf_tokenizer.h"
#include "io/input_file.h"
#include "io/json_file.h"

namespace difftx::data {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

enum class Converter { gpt2, qwen2 };

// Qwen2Converter's split pattern (Qwen2Tokenizer's PRETOKENIZE_REGEX).
constexpr const char* kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// An optional file of one JSON object; an empty object where there is no such file.
json json_object_file(const fs::path& file) { return io::read_json_object_if_present(file).value_or(json::object()); }

std::string string_key(const json& j, const char* key, const fs::path& file) {
  if (!j.contains(key) || j[key].is_null()) return "";
  DIFFTX_CHECK(j[key].is_string(), file.string(), ": ", key, ": expected a string");
  return j[key].get<std::string>();
}

// tokenizer_config.json's tokenizer_class (a Fast class converts as its slow one), else what
// AutoTokenizer takes for config.json's model_type.
Converter converter_for(const json& config, const fs::path& dir) {
  std::string name = string_key(config, "tokenizer_class", dir / kHfTokenizerConfigFile);
  if (name.ends_with("Fast")) name.resize(name.size() - 4);
  if (name.empty()) {
    const fs::path model_config = dir / "config.json";
    const std::string type = string_key(json_object_file(model_config), "model_type", model_config);
    if (type == "gpt2" || type == "codegen") return Converter::gpt2;
    if (type == "qwen2" || type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe") return Converter::qwen2;
    fail(dir.string(), ": ", kHfTokenizerConfigFile, " names no tokenizer_class and config.json's model_type '",
         type.substr(0, 60), "' is not one whose vocab.json and merges.txt difftx converts (gpt2, codegen, qwen2, "
         "qwen3); a tokenizer.json beside them is read instead");
  }
  if (name == "GPT2Tokenizer" || name == "CodeGenTokenizer") return Converter::gpt2;
  if (name == "Qwen2Tokenizer") return Converter::qwen2;
  fail(dir / kHfTokenizerConfigFile, ": tokenizer_class '", name.substr(0, 60),
       "': difftx converts the vocab.json and merges.txt of GPT2Tokenizer, CodeGenTokenizer and Qwen2Tokenizer "
       "(with or without Fast); for another class it needs the model's tokenizer.json");
}

// merges.txt: "LEFT RIGHT" per line in rank order. Qwen2Tokenizer skips a first "#version" line and
// blank lines; GPT2Tokenizer takes the lines between the first and the last '\n' (its first line
// is always the "#version" one, whatever it holds), blank ones skipped here.
json read_merges_file(const fs::path& file, Converter converter) {
  std::string text = io::read_whole_file(file);
  if (converter == Converter::gpt2) {
    const size_t first = text.find('\n'), last = text.rfind('\n');
    text = first == last ? std::string() : text.substr(first + 1, last - first - 1);
  }
  json merges = json::array();
  for_each_line(text, [&](std::string_view line, size_t line_no) {
    constexpr std::string_view kBlank = " \t\r";
    const size_t first = line.find_first_not_of(kBlank);
    if (first == std::string_view::npos) return;
    line = line.substr(first, line.find_last_not_of(kBlank) - first + 1);
    if (converter == Converter::qwen2 && line_no == 1 && line.starts_with("#version")) return;
    const size_t gap = line.find_first_of(kBlank);
    const size_t right = gap == std::string_view::npos ? gap : line.find_first_not_of(kBlank, gap);
    DIFFTX_CHECK(right != std::string_view::npos && line.find_first_of(kBlank, right) == std::string_view::npos,
                 file.string(), ":", line_no + (converter == Converter::gpt2), ": expected two tokens separated by a "
                 "space, got '", line.substr(0, 60), "'");
    merges.push_back(json::array({std::string(line.substr(0, gap)), std::string(line.substr(right))}));
  });
  return merges;
}

constexpr const char* kSpecialTokenKeys[] = {"bos_token", "eos_token",  "unk_token",  "pad_token",
                                             "sep_token", "cls_token",  "mask_token", "additional_special_tokens"};

// tokenizer_config.json's settings as the class's __init__ sees them: where the file has no
// added_tokens_decoder (transformers' legacy loading), special_tokens_map.json's special tokens
// replace its own; a special token named nowhere takes the class's default (GPT-2's unk, bos and
// eos, Qwen 2's unk, eos and pad: "<|endoftext|>").
json effective_settings(const fs::path& dir, json config, Converter converter) {
  const json special_map =
      config.contains("added_tokens_decoder") ? json::object() : json_object_file(dir / "special_tokens_map.json");
  for (const auto& [key, value] : special_map.items())
    if (std::find(std::begin(kSpecialTokenKeys), std::end(kSpecialTokenKeys), key) != std::end(kSpecialTokenKeys))
      config[key] = value;
  const std::vector<const char*> defaults = converter == Converter::gpt2
                                                ? std::vector<const char*>{"unk_token", "bos_token", "eos_token"}
                                                : std::vector<const char*>{"unk_token", "eos_token", "pad_token"};
  for (const char* key : defaults)
    if (!config.contains(key)) config[key] = "<|endoftext|>";
  return config;
}

// tokenizer.json's added_tokens: the settings' added_tokens_decoder ({"ID": {"content", ...}}), or
// without one added_tokens.json's {"CONTENT": ID} (special where a special token names it); then
// the settings' special tokens, with the vocabulary's id for a token it has and the next free id
// otherwise, as transformers adds them.
json added_tokens(const fs::path& dir, const json& config, const json& vocab) {
  json added = json::array();
  int64_t next_id = 0;
  for (const auto& [text, id] : vocab.items())
    if (id.is_number_integer()) next_id = std::max(next_id, id.get<int64_t>() + 1);
  const auto listed = [&](const std::string& content) {
    for (const json& t : added)
      if (t.contains("content") && t["content"] == content) return true;
    return false;
  };
  const auto add = [&](json token) {
    if (token["id"].is_number_integer()) next_id = std::max(next_id, token["id"].get<int64_t>() + 1);
    added.push_back(std::move(token));
  };
  const fs::path config_file = dir / kHfTokenizerConfigFile;
  if (config.contains("added_tokens_decoder")) {
    const json& decoder = config["added_tokens_decoder"];
    DIFFTX_CHECK(decoder.is_object(), config_file.string(), ": added_tokens_decoder: expected an object");
    for (const auto& [key, entry] : decoder.items()) {
      int64_t id = -1;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      DIFFTX_CHECK(ec == std::errc() && end == key.data() + key.size() && id >= 0, config_file.string(),
                   ": added_tokens_decoder: key '", key.substr(0, 40), "' is not a token id");
      DIFFTX_CHECK(entry.is_object(), config_file.string(), ": added_tokens_decoder.", key, ": expected an object");
      json token = entry;
      token["id"] = id;
      add(std::move(token));
    }
  }
  const json legacy = config.contains("added_tokens_decoder") ? json::object()
                                                               : json_object_file(dir / "added_tokens.json");
  std::vector<std::string> specials;
  for (const char* key : kSpecialTokenKeys) {
    if (!config.contains(key)) continue;
    const json& value = config[key];
    for (const json& v : value.is_array() ? value : json::array({value}))
      if (const std::optional<std::string> content = special_token_text(v); content && !content->empty())
        specials.push_back(*content);
  }
  for (const auto& [content, id] : legacy.items())
    if (!listed(content))
      add({{"id", id}, {"content", content},
           {"special", std::find(specials.begin(), specials.end(), content) != specials.end()}});
  for (const std::string& content : specials)
    if (!listed(content)) add({{"id", vocab.contains(content) ? vocab[content] : json(next_id)},
                               {"content", content}, {"special", true}});
  return added;
}

}  // namespace

Tokenizer read_hf_slow_tokenizer(const fs::path& dir) {
  const fs::path vocab_file = dir / kHfVocabFile, merges_file = dir / kHfMergesFile;
  for (const fs::path& f : {vocab_file, merges_file})
    DIFFTX_CHECK(fs::is_regular_file(f), dir.string(), ": no ", f.filename().string(), " (a slow tokenizer is ",
                 kHfVocabFile, " and ", kHfMergesFile, ")");
  const fs::path config_file = dir / kHfTokenizerConfigFile;
  const json file_config = json_object_file(config_file);
  const Converter converter = converter_for(file_config, dir);
  const json config = effective_settings(dir, file_config, converter);
  DIFFTX_CHECK(!config.contains("add_prefix_space") || config["add_prefix_space"].is_null() ||
                   config["add_prefix_space"].is_boolean(),
               config_file.string(), ": add_prefix_space: expected true or false");
  DIFFTX_CHECK(config.value("add_prefix_space", json(false)) != json(true), config_file.string(),
               ": add_prefix_space true is not supported");
  json vocab = io::read_json_file(vocab_file);
  DIFFTX_CHECK(vocab.is_object(), vocab_file.string(), ": expected a JSON object (token -> id)");
  json t;
  t["added_tokens"] = added_tokens(dir, config, vocab);
  t["model"] = {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", read_merges_file(merges_file, converter)}};
  if (converter == Converter::qwen2) {
    t["normalizer"] = {{"type", "NFC"}};
    t["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", kQwen2Pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  } else {
    t["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  }
  t["decoder"] = {{"type", "ByteLevel"}};
  t["post_processor"] = {{"type", "ByteLevel"}};  // BOS from tokenizer_config.json's add_bos_token
  return hf_tokenizer_from_json(t, vocab_file.string() + " and " + kHfMergesFile, config, config_file.string());
}

}  // namespace difftx::data
