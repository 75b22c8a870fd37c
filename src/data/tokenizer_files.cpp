#include "data/tokenizer_files.h"
#include "io/input_file.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/lines.h"
#include "data/base64.h"
#include "data/data_paths.h"
#include "data/encodings.h"
#include "data/hf_tokenizer.h"
#include "io/atomic_file.h"
#include "io/json_file.h"

namespace difftx::data {
namespace fs = std::filesystem;
namespace {

// Ranks and special ids above this are rejected: tables are indexed by id, and a hostile file
// must not make us allocate gigabytes.
constexpr int64_t kMaxId = (1 << 24) - 1;

std::string known_names() {
  std::string s;
  for (const auto& n : builtin_encoding_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

fs::path sidecar_of(const fs::path& ranks_file) { return fs::path(ranks_file.string() + ".json"); }

Tokenizer from_sidecar(const fs::path& ranks_file, const fs::path& sidecar) {
  const std::string where = sidecar.string();
  const nlohmann::json j = io::read_json_file(sidecar);
  DIFFTX_CHECK(j.is_object(), where, ": expected a JSON object");
  // (json defaults: a value of another type compares unequal instead of throwing)
  DIFFTX_CHECK(j.value("format", nlohmann::json()) == "difftx-tokenizer", where,
               ": expected \"format\": \"difftx-tokenizer\"");
  DIFFTX_CHECK(j.value("version", nlohmann::json()) == 1, where, ": unsupported version (expected 1)");
  const auto text_or = [&](const char* key, const std::string& fallback) {
    if (!j.contains(key)) return fallback;
    DIFFTX_CHECK(j[key].is_string(), where, ": \"", key, "\" must be a string");
    return j[key].get<std::string>();
  };
  DIFFTX_CHECK(j.contains("pattern") && j["pattern"].is_string(), where,
               ": missing string \"pattern\" (the split pattern)");
  DIFFTX_CHECK(j.contains("special_tokens") && j["special_tokens"].is_object(), where,
               ": missing object \"special_tokens\" (token string -> id)");
  std::map<std::string, int32_t> specials;
  for (const auto& [text, id] : j["special_tokens"].items()) {
    DIFFTX_CHECK(id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() <= kMaxId,
                 where, ": special token ", text, " needs an integer id in [0, ", kMaxId, "]");
    specials[text] = id.get<int32_t>();
  }
  const std::string name = text_or("name", ranks_file.stem().string());
  const std::string eot = text_or("end_of_text", kEndOfText);
  Tokenizer tokenizer(name, read_tiktoken_file(ranks_file), j["pattern"].get<std::string>(),
                      std::move(specials), eot);
  if (j.contains("vocab_size"))
    DIFFTX_CHECK(j["vocab_size"] == tokenizer.vocab_size(), where, ": says vocab_size ",
                 io::json_value_for_message(j["vocab_size"]), " but its tokens give ", tokenizer.vocab_size());
  return tokenizer;
}

Tokenizer from_builtin(const EncodingSpec& spec, const fs::path& ranks_file) {
  return Tokenizer(spec.name, read_tiktoken_file(ranks_file), spec.pattern, spec.special_tokens);
}

Tokenizer from_file(const fs::path& file) {
  if (file.extension() == ".json") return read_hf_tokenizer(file);
  if (fs::exists(sidecar_of(file))) return from_sidecar(file, sidecar_of(file));
  auto spec = builtin_encoding(file.stem().string());
  DIFFTX_CHECK(spec.has_value(), file.string(), ": no sidecar ", sidecar_of(file).string(),
               " with the split pattern and special tokens, and '", file.stem().string(),
               "' is not a built-in encoding (", known_names(), ")");
  return from_builtin(*spec, file);
}

bool has_slow_tokenizer(const fs::path& dir) {
  return fs::is_regular_file(dir / kHfVocabFile) && fs::is_regular_file(dir / kHfMergesFile);
}

Tokenizer from_dir(const fs::path& dir) {
  const fs::path ranks = dir / kTokenizerRanksFile;
  if (!fs::is_regular_file(ranks) && fs::is_regular_file(dir / kHfTokenizerFile))
    return read_hf_tokenizer(dir / kHfTokenizerFile);
  if (!fs::is_regular_file(ranks) && has_slow_tokenizer(dir)) return read_hf_slow_tokenizer(dir);
  DIFFTX_CHECK(fs::is_regular_file(ranks), dir.string(), ": no tokenizer in this directory (", kTokenizerFilesNamed,
               "; expected a tokenizer written by difftx prepare, or a Hugging Face model directory)");
  DIFFTX_CHECK(fs::is_regular_file(sidecar_of(ranks)), dir.string(), ": no ",
               kTokenizerSidecarFile, " beside ", kTokenizerRanksFile);
  return from_sidecar(ranks, sidecar_of(ranks));
}

}  // namespace

bool has_tokenizer_files(const fs::path& dir) {
  return fs::is_regular_file(dir / kTokenizerRanksFile) || fs::is_regular_file(dir / kHfTokenizerFile) ||
         has_slow_tokenizer(dir);
}

TokenTable read_tiktoken_file(const fs::path& path) {
  const std::string text = io::read_whole_file(path);
  const std::string where = path.string();
  TokenTable table;
  std::vector<int64_t> line_of_rank;
  for_each_line(text, [&](std::string_view line, size_t line_no) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return;
    const size_t space = line.find(' ');
    DIFFTX_CHECK(space != std::string_view::npos, where, ":", line_no,
                 ": expected \"BASE64 RANK\", got '", line.substr(0, 80), "'");
    const std::string_view b64 = line.substr(0, space), rank_text = line.substr(space + 1);
    const auto bytes = base64_decode(b64);
    DIFFTX_CHECK(bytes.has_value() && !bytes->empty(), where, ":", line_no, ": bad base64 '",
                 b64.substr(0, 80), "'");
    int64_t rank = -1;
    const auto [ptr, ec] = std::from_chars(rank_text.data(), rank_text.data() + rank_text.size(), rank);
    DIFFTX_CHECK(ec == std::errc() && ptr == rank_text.data() + rank_text.size() && rank >= 0 &&
                     rank <= kMaxId,
                 where, ":", line_no, ": bad rank '", rank_text.substr(0, 40),
                 "' (expected an integer in [0, ", kMaxId, "])");
    if (table.has_rank(static_cast<int32_t>(rank)))
      fail(where, ":", line_no, ": duplicate rank ", rank, " (first on line ", line_of_rank[rank],
           ")");
    const int32_t same = table.find(*bytes);
    if (same >= 0)
      fail(where, ":", line_no, ": duplicate token '", b64, "' (first on line ",
           line_of_rank[same], " with rank ", same, ")");
    table.insert(*bytes, static_cast<int32_t>(rank));
    if (static_cast<size_t>(rank) >= line_of_rank.size()) line_of_rank.resize(rank + 1, 0);
    line_of_rank[rank] = static_cast<int64_t>(line_no);
  });
  DIFFTX_CHECK(table.size() > 0, where, ": no tokens (empty rank file)");
  return table;
}

std::string tiktoken_file_text(const TokenTable& ranks) {
  std::string out;
  for (int32_t r = 0; r < ranks.rank_end(); ++r) {
    if (!ranks.has_rank(r)) continue;
    out += base64_encode(ranks.bytes_of(r));
    out += ' ';
    out += std::to_string(r);
    out += '\n';
  }
  return out;
}

Tokenizer load_tokenizer(const std::string& name_or_path) {
  DIFFTX_CHECK(!name_or_path.empty(), "tokenizer: empty name");
  const fs::path given(name_or_path);
  if (fs::is_directory(given)) return from_dir(given);
  if (fs::is_regular_file(given)) return from_file(given);

  const fs::path dir = tokenizer_dir();
  if (const auto spec = builtin_encoding(name_or_path)) {
    const fs::path file = dir / spec->ranks_file;
    DIFFTX_CHECK(fs::is_regular_file(file), "tokenizer '", name_or_path, "': ", file.string(),
                 " not found (run scripts/setup to fetch the tokenizer files)");
    return from_builtin(*spec, file);
  }
  if (fs::is_directory(dir / name_or_path)) return from_dir(dir / name_or_path);
  const fs::path file = dir / (name_or_path + ".tiktoken");
  if (fs::is_regular_file(file)) return from_file(file);
  fail("tokenizer '", name_or_path, "': not a file, a directory, or a tokenizer in ",
       dir.string(), " (built-in names: ", known_names(),
       "; run scripts/setup if their files are missing)");
}

std::vector<std::string> saved_tokenizer_files(const Tokenizer& tokenizer) {
  if (tokenizer.tiktoken_family()) return {kTokenizerRanksFile, kTokenizerSidecarFile};
  return {kHfTokenizerFile, kHfTokenizerConfigFile};
}

void save_tokenizer(const Tokenizer& tokenizer, const fs::path& dir) {
  if (!tokenizer.tiktoken_family()) return write_hf_tokenizer(tokenizer, dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  DIFFTX_CHECK(!ec, dir.string(), ": cannot create directory (", ec.message(), ")");
  nlohmann::ordered_json j;
  j["format"] = "difftx-tokenizer";
  j["version"] = 1;
  j["name"] = tokenizer.name();
  j["pattern"] = tokenizer.pattern();
  j["special_tokens"] = nlohmann::ordered_json::object();
  for (const auto& [text, id] : tokenizer.special_tokens()) j["special_tokens"][text] = id;
  j["end_of_text"] = tokenizer.end_of_text_string();
  j["vocab_size"] = tokenizer.vocab_size();
  io::write_file_atomically(dir / kTokenizerRanksFile, tiktoken_file_text(tokenizer.ranks()));
  io::write_file_atomically(dir / kTokenizerSidecarFile, j.dump(2) + "\n");
}

}  // namespace difftx::data
