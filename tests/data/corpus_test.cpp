// Corpus reading: files, JSONL, directories, and the bad inputs (binary files, empty corpus)
// that must be clear errors naming the file and position.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace difftx::data
