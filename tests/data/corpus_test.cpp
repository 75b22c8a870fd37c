// Corpus reading: files, JSONL, directories, and the bad inputs (binary files, empty corpus)
// that must be clear errors naming the file and position.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "data/corpus.h"
#include "data/sha256.h"
#include "data_fixtures.h"
#include "support/testing.h"

namespace difftx::data {
namespace {

using difftx::testing::error_of;

TEST(Corpus, ReadsTextJsonlAndDirectoriesInPathOrder) {
  testing::TempDir dir;
  dir.write("d/b.txt", "second file");
  dir.write("d/a.txt", "\xEF\xBB\xBF" "first file");  // byte-order mark dropped
  dir.write("d/sub/c.md", "markdown");
  dir.write("d/.hidden.txt", "skipped");
  dir.write("d/notes.csv", "skipped: not a corpus extension");
  dir.write("d/empty.txt", "");
  const auto jsonl = dir.write("docs.jsonl", "{\"text\": \"one\", \"id\": 1}\n\n{\"text\": \"two\\nlines\"}\r\n{\"text\": \"\"}\n");
  const Corpus c = read_corpus({(dir / "d").string(), jsonl.string()});
  std::vector<std::string> texts;
  for (const Document& d : c.documents) texts.push_back(d.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"first file", "second file", "markdown", "one", "two\nlines"}));
  ASSERT_EQ(c.sources.size(), 5u);  // a.txt, b.txt, empty.txt, sub/c.md, docs.jsonl
  EXPECT_EQ(c.sources[2].documents, 0);
  EXPECT_EQ(c.sources[4].documents, 2);
  EXPECT_EQ(c.documents[3].source, 4);
  EXPECT_EQ(c.sources[1].sha256, sha256_hex("second file"));
  EXPECT_EQ(c.text_bytes(), 10 + 11 + 8 + 3 + 9);
}

TEST(Corpus, EmptyCorpusIsAnError) {
  testing::TempDir dir;
  const auto a = dir.write("a.txt", ""), b = dir.write("b.jsonl", "\n\n{\"text\": \"\"}\n");
  const std::string msg = error_of([&] { read_corpus({a.string(), b.string()}); });
  EXPECT_NE(msg.find("empty corpus: no text in " + a.string() + ", " + b.string()), std::string::npos) << msg;
}

TEST(Corpus, BinaryFilesAreErrorsNamingFileOffsetAndLine) {
  testing::TempDir dir;
  const auto nul = dir.write("image.txt", std::string("line one\nPNG\0\x01\x02", 15));
  std::string msg = error_of([&] { read_corpus({nul.string()}); });
  EXPECT_NE(msg.find(nul.string() + ": binary file? NUL byte at byte offset 12 (line 2)"), std::string::npos) << msg;

  const auto latin1 = dir.write("latin1.txt", "ok\nok\ncaf\xE9 au lait");
  msg = error_of([&] { read_corpus({latin1.string()}); });
  EXPECT_NE(msg.find(latin1.string() + ": invalid UTF-8 at byte offset 9 (bytes 0xE9 0x20 0x61 0x75) (line 3)"),
            std::string::npos) << msg;

  // A binary file in a directory is named too, and so is a binary file called .jsonl.
  dir.write("d/good.txt", "fine");
  const auto bad = dir.write("d/z.jsonl", std::string("\x1f\x8b\x08\x00", 4));
  msg = error_of([&] { read_corpus({(dir / "d").string()}); });
  EXPECT_NE(msg.find(bad.string() + ":"), std::string::npos) << msg;
}

TEST(Corpus, BadJsonlLinesAreErrorsNamingTheLine) {
  testing::TempDir dir;
  const auto a = dir.write("a.jsonl", "{\"text\": \"ok\"}\n{\"text\": 3}\n");
  std::string msg = error_of([&] { read_corpus({a.string()}); });
  EXPECT_NE(msg.find(a.string() + ":2: expected a JSON object with a string field \"text\""), std::string::npos) << msg;
  const auto b = dir.write("b.jsonl", "{\"text\": \"ok\"}\n{broken\n");
  msg = error_of([&] { read_corpus({b.string()}); });
  EXPECT_NE(msg.find(b.string() + ":2: invalid JSON"), std::string::npos) << msg;
}

TEST(Corpus, MissingPathsAndEmptyDirectoriesAreErrors) {
  testing::TempDir dir;
  std::string msg = error_of([&] { read_corpus({(dir / "nope.txt").string()}); });
  EXPECT_NE(msg.find("nope.txt: corpus path does not exist"), std::string::npos) << msg;
  dir.write("d/x.bin", "not a corpus extension");
  msg = error_of([&] { read_corpus({(dir / "d").string()}); });
  EXPECT_NE(msg.find("directory has no corpus files (*.txt, *.md, *.jsonl)"), std::string::npos) << msg;
}

TEST(Corpus, DefaultCorpusIsSotuAndMobyDick) {
  DIFFTX_REQUIRE_DATA("sotu");
  DIFFTX_REQUIRE_DATA("moby-dick/file_list.json");
  const auto paths = default_corpus_paths();
  ASSERT_EQ(paths.size(), 233u + 139u);
  EXPECT_NE(paths.front().find("sotu/1790_george_washington"), std::string::npos);
  EXPECT_NE(paths.back().find("moby-dick/epilogue.txt"), std::string::npos);
}

Corpus corpus_of(std::vector<std::string> texts) {
  Corpus c;
  c.sources.push_back({"a.txt", "", 0, static_cast<int64_t>(texts.size())});
  for (std::string& t : texts) c.documents.push_back({std::move(t), 0});
  return c;
}

std::vector<std::string> texts_of(const Corpus& c) {
  std::vector<std::string> texts;
  for (const Document& d : c.documents) texts.push_back(d.text);
  return texts;
}

TEST(Corpus, LongDocumentsAreCutAtParagraphEndsThenLinesThenCharacters) {
  // A paragraph end in the passage's second half wins over a later newline.
  Corpus c = corpus_of({"aaaaaa\n\nbbbb\ncc", "short"});
  split_long_documents(c, 14);
  EXPECT_EQ(texts_of(c), (std::vector<std::string>{"aaaaaa\n\n", "bbbb\ncc", "short"}));
  EXPECT_EQ(c.sources[0].documents, 3);
  // A paragraph end in the first half is too early: the last newline is taken instead.
  c = corpus_of({"a\n\nbbbbbbbbb\ncccc"});
  split_long_documents(c, 16);
  EXPECT_EQ(texts_of(c), (std::vector<std::string>{"a\n\nbbbbbbbbb\n", "cccc"}));
  // No newline: a hard cut that never splits a character ("\xC3\xA9" is one).
  c = corpus_of({"abc\xC3\xA9" "defgh"});
  split_long_documents(c, 4);
  EXPECT_EQ(texts_of(c), (std::vector<std::string>{"abc", "\xC3\xA9" "de", "fgh"}));
  // 0 leaves the corpus alone; 1-3 cannot hold every character.
  c = corpus_of({"abcdef"});
  split_long_documents(c, 0);
  EXPECT_EQ(texts_of(c), std::vector<std::string>{"abcdef"});
  const std::string msg = error_of([&] { split_long_documents(c, 3); });
  EXPECT_NE(msg.find("--max-document-bytes must be 0 or at least 4"), std::string::npos) << msg;
}

TEST(Corpus, PassagesConcatenateToTheDocumentAndRespectTheLimit) {
  std::string text;
  uint64_t x = 12345;
  for (int i = 0; i < 20000; ++i) {  // words, newlines, blank lines and two-byte characters
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const int r = static_cast<int>(x >> 60);
    text += r == 0 ? "\n\n" : r == 1 ? "\n" : r == 2 ? "\xC3\xA9" : "word ";
  }
  for (const int64_t limit : {4, 7, 64, 1000, 65536}) {
    Corpus c = corpus_of({text});
    split_long_documents(c, limit);
    std::string joined;
    for (const Document& d : c.documents) {
      EXPECT_LE(static_cast<int64_t>(d.text.size()), limit);
      EXPECT_FALSE(d.text.empty());
      EXPECT_NE(static_cast<unsigned char>(d.text[0]) & 0xC0, 0x80) << "a passage starts inside a character";
      joined += d.text;
    }
    EXPECT_EQ(joined, text) << limit;
    EXPECT_EQ(c.sources[0].documents, static_cast<int64_t>(c.documents.size()));
  }
}

TEST(Corpus, BooksCorpusIsTheDefaultAndTheGutenbergBooks) {
  DIFFTX_REQUIRE_DATA("sotu");
  DIFFTX_REQUIRE_DATA("moby-dick/file_list.json");
  DIFFTX_REQUIRE_DATA("gutenberg/austen-emma.txt");
  const auto defaults = default_corpus_paths();
  const auto books = books_corpus_paths();
  ASSERT_EQ(books.size(), defaults.size() + 17);  // NLTK's 18 books but its Moby-Dick
  EXPECT_TRUE(std::equal(defaults.begin(), defaults.end(), books.begin()));
  EXPECT_NE(books[defaults.size()].find("gutenberg/austen-emma.txt"), std::string::npos);
  EXPECT_NE(books.back().find("gutenberg/whitman-leaves.txt"), std::string::npos);
  for (const std::string& p : books) EXPECT_EQ(p.find("melville-moby_dick"), std::string::npos) << p;
  // Every book reads as UTF-8 (setup converted the one Latin-1 file).
  const Corpus c = read_corpus(std::vector<std::string>(books.begin() + static_cast<std::ptrdiff_t>(defaults.size()), books.end()));
  EXPECT_GT(c.text_bytes(), 10'000'000);
}

}  // namespace
}  // namespace difftx::data
