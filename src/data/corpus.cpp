#include "data/corpus.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/lines.h"
#include "data/data_paths.h"
#include "data/sha256.h"
#include "data/utf8.h"
#include "io/input_file.h"
#include "io/json_file.h"

namespace difftx::data {
namespace fs = std::filesystem;
namespace {

int64_t line_of(std::string_view text, size_t offset) {
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
}

// Binary files and other non-text: the first NUL byte or invalid UTF-8 sequence.
void check_text(const std::string& bytes, const std::string& path) {
  const size_t invalid = valid_utf8_prefix(bytes);
  const void* nul = std::memchr(bytes.data(), 0, invalid);
  if (nul != nullptr) {
    const size_t at = static_cast<const char*>(nul) - bytes.data();
    fail(path, ": binary file? NUL byte at byte offset ", at, " (line ", line_of(bytes, at),
         "); corpus files must be UTF-8 text");
  }
  if (invalid != bytes.size()) {
    try {
      check_utf8(bytes, path);
    } catch (const Error& e) {
      fail(e.what(), " (line ", line_of(bytes, invalid),
           "); corpus files must be UTF-8 text, is this a binary file?");
    }
  }
}

bool is_jsonl(const fs::path& p) { return p.extension() == ".jsonl" || p.extension() == ".json"; }

bool is_corpus_file(const fs::path& p) {
  const std::string name = p.filename().string();
  if (name.empty() || name[0] == '.') return false;
  const auto ext = p.extension();
  return ext == ".txt" || ext == ".md" || ext == ".jsonl";
}

void add_file(const fs::path& path, const std::string& text_field, Corpus& corpus) {
  const std::string where = path.string();
  std::string bytes = io::read_whole_file(path);
  check_text(bytes, where);
  CorpusSource source{where, sha256_hex(bytes), static_cast<int64_t>(bytes.size()), 0};
  const auto index = static_cast<int32_t>(corpus.sources.size());
  auto add = [&](std::string text) {
    if (text.empty()) return;
    corpus.documents.push_back({std::move(text), index});
    ++source.documents;
  };
  if (is_jsonl(path)) {
    for_each_line(bytes, [&](std::string_view line, size_t line_no) {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
      const nlohmann::json j =
          io::parse_json_text(line, concat(where, ":", line_no));  // JSONL: one object per line
      DIFFTX_CHECK(j.is_object() && j.contains(text_field) && j[text_field].is_string(), where,
                   ":", line_no, ": expected a JSON object with a string field \"", text_field,
                   "\"");
      add(j[text_field].get<std::string>());
    });
  } else {
    constexpr std::string_view kBom = "\xEF\xBB\xBF";
    if (bytes.compare(0, kBom.size(), kBom) == 0) bytes.erase(0, kBom.size());
    add(std::move(bytes));
  }
  corpus.sources.push_back(std::move(source));
}

// Where the first passage of `text` ends (split_long_documents).
size_t passage_end(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  const std::string_view window = text.substr(0, max_bytes);
  const size_t half = max_bytes / 2;
  if (const size_t blank = window.rfind("\n\n"); blank != std::string_view::npos && blank + 2 > half)
    return blank + 2;
  if (const size_t newline = window.rfind('\n'); newline != std::string_view::npos && newline + 1 > half)
    return newline + 1;
  size_t end = max_bytes;  // the byte after the cut starts a character
  while ((static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return end;
}

}  // namespace

int64_t Corpus::text_bytes() const {
  int64_t n = 0;
  for (const Document& d : documents) n += static_cast<int64_t>(d.text.size());
  return n;
}

Corpus read_corpus(const std::vector<std::string>& paths, const std::string& text_field) {
  DIFFTX_CHECK(!paths.empty(), "corpus: no paths given");
  Corpus corpus;
  for (const std::string& p : paths) {
    const fs::path path(p);
    if (fs::is_directory(path)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::recursive_directory_iterator(path))
        if (entry.is_regular_file() && is_corpus_file(entry.path())) files.push_back(entry.path());
      DIFFTX_CHECK(!files.empty(), p, ": directory has no corpus files (*.txt, *.md, *.jsonl); files with other "
                   "names are read as plain text when named one by one (--corpus DIR/*)");
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) add_file(f, text_field, corpus);
    } else {
      DIFFTX_CHECK(fs::exists(path), p, ": corpus path does not exist");
      add_file(path, text_field, corpus);
    }
  }
  std::string all;
  for (const std::string& p : paths) all += (all.empty() ? "" : ", ") + p;
  DIFFTX_CHECK(!corpus.documents.empty(), "empty corpus: no text in ", all);
  return corpus;
}

void split_long_documents(Corpus& corpus, int64_t max_bytes) {
  if (max_bytes == 0) return;
  DIFFTX_CHECK(max_bytes >= 4, "--max-document-bytes must be 0 or at least 4 (one UTF-8 character), got ",
               max_bytes);
  std::vector<Document> passages;
  for (CorpusSource& s : corpus.sources) s.documents = 0;
  for (const Document& d : corpus.documents) {
    for (std::string_view rest = d.text; !rest.empty();) {
      const size_t n = passage_end(rest, static_cast<size_t>(max_bytes));
      passages.push_back({std::string(rest.substr(0, n)), d.source});
      ++corpus.sources[static_cast<size_t>(d.source)].documents;
      rest.remove_prefix(n);
    }
  }
  corpus.documents = std::move(passages);
}

std::vector<std::string> default_corpus_paths() {
  const fs::path root = data_root();
  const fs::path sotu = root / "sotu", moby = root / "moby-dick";
  DIFFTX_CHECK(fs::is_directory(sotu) && fs::is_regular_file(moby / "file_list.json"),
               "the default corpus is missing from ", root.string(),
               " (expected sotu/ and moby-dick/): run scripts/setup to fetch it");
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(sotu))
    if (entry.path().extension() == ".txt") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  const nlohmann::json list = io::read_json_file(moby / "file_list.json");
  DIFFTX_CHECK(list.is_array(), (moby / "file_list.json").string(), ": expected an array of file names");
  for (const auto& name : list) {
    DIFFTX_CHECK(name.is_string(), (moby / "file_list.json").string(), ": expected file names");
    paths.push_back((moby / name.get<std::string>()).string());
  }
  return paths;
}

std::vector<std::string> books_corpus_paths() {
  const fs::path books = data_root() / "gutenberg";
  DIFFTX_CHECK(fs::is_directory(books), "the books corpus is missing from ", data_root().string(),
               " (expected gutenberg/): run scripts/setup to fetch it");
  std::vector<std::string> paths = default_corpus_paths();
  const size_t first_book = paths.size();
  for (const auto& entry : fs::directory_iterator(books))
    if (entry.path().extension() == ".txt" && entry.path().filename() != "melville-moby_dick.txt")
      paths.push_back(entry.path().string());
  DIFFTX_CHECK(paths.size() > first_book, books.string(), ": no books (*.txt): run scripts/setup to fetch them");
  std::sort(paths.begin() + static_cast<std::ptrdiff_t>(first_book), paths.end());
  return paths;
}

}  // namespace difftx::data
