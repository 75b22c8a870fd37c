// `difftx prepare` as a library call on small corpora in temp folders: the shards hold every
// document exactly once behind an end-of-text token, validation takes whole documents, the
// output is byte-identical across runs and thread counts, and bad corpora are clear errors.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>

#include "core/error.h"
#include "data/dataset.h"
#include "data/prepare.h"
#include "data/shard.h"
#include "data/tokenizer_files.h"
#include "data_fixtures.h"
#include "io/input_file.h"
#include "support/testing.h"

namespace difftx::data {
namespace {

using difftx::testing::error_of;

// A corpus of `docs` random documents: most as .txt files, some as JSONL lines.
std::vector<std::string> write_corpus(const testing::TempDir& dir, int docs, uint64_t seed,
                                      std::vector<std::string>* texts) {
  Rng rng(seed);
  std::string jsonl;
  for (int i = 0; i < docs; ++i) {
    std::string text = testing::random_text(rng, 200 + rng.below(3000));
    if (i % 4 == 3) {
      jsonl += nlohmann::json{{"text", text}}.dump() + "\n";
    } else {
      char name[32];
      std::snprintf(name, sizeof name, "corpus/doc%03d.txt", i);
      dir.write(name, text);
    }
    texts->push_back(std::move(text));
  }
  dir.write("extra.jsonl", jsonl);
  return {(dir / "corpus").string(), (dir / "extra.jsonl").string()};
}

// All tokens of a split, shard after shard.
std::vector<int32_t> read_split(const std::filesystem::path& dir, const nlohmann::json& meta,
                                const std::string& split) {
  std::vector<int32_t> all;
  for (const auto& s : meta["splits"][split]["shards"]) {
    const Shard shard(dir / s["file"].get<std::string>());
    std::vector<int32_t> ids(shard.tokens());
    shard.copy(0, shard.tokens(), ids.data());
    all.insert(all.end(), ids.begin(), ids.end());
  }
  return all;
}

// The documents of a split's stream: each follows an end-of-text token.
std::vector<std::string> documents_of(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::vector<std::string> docs;
  if (ids.empty()) return docs;
  EXPECT_EQ(ids[0], tok.end_of_text());
  size_t begin = 1;
  for (size_t i = 1; i <= ids.size(); ++i)
    if (i == ids.size() || ids[i] == tok.end_of_text()) {
      docs.push_back(tok.decode(std::span<const int32_t>(ids.data() + begin, i - begin)));
      begin = i + 1;
    }
  return docs;
}

TEST(Prepare, ShardsHoldEveryDocumentOnceInWholeDocumentSplits) {
  testing::TempDir dir;
  std::vector<std::string> texts;
  PrepareOptions o;
  o.corpus = write_corpus(dir, 40, 1, &texts);
  o.vocab_size = 600;
  o.out = dir / "out";
  o.val_fraction = 0.2;
  o.shard_tokens = 5000;  // several shards per split
  o.progress = false;
  const auto meta = prepare_dataset(o);

  const Tokenizer tok = load_tokenizer((dir / "out").string());
  EXPECT_EQ(tok.vocab_size(), 600);
  EXPECT_EQ(meta["tokenizer"]["vocab_size"], 600);
  EXPECT_EQ(meta["tokenizer"]["end_of_text"], 599);
  EXPECT_EQ(meta["dtype"], "uint16");
  EXPECT_GT(meta["splits"]["train"]["shards"].size(), 1u);
  const auto train = documents_of(tok, read_split(o.out, meta, "train"));
  const auto val = documents_of(tok, read_split(o.out, meta, "val"));
  EXPECT_EQ(static_cast<int64_t>(train.size()), meta["splits"]["train"]["documents"].get<int64_t>());
  EXPECT_EQ(static_cast<int64_t>(val.size()), meta["splits"]["val"]["documents"].get<int64_t>());
  // Together they are the corpus: every document whole, once, in corpus order within a split.
  std::vector<std::string> both = train;
  both.insert(both.end(), val.begin(), val.end());
  std::vector<std::string> want = texts;
  std::sort(both.begin(), both.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(both, want);
  const double val_bytes = meta["splits"]["val"]["bytes"].get<double>();
  const double all_bytes = val_bytes + meta["splits"]["train"]["bytes"].get<double>();
  EXPECT_GE(val_bytes / all_bytes, 0.2);
  EXPECT_LT(val_bytes / all_bytes, 0.35);
  // Sources carry their checksums.
  ASSERT_EQ(meta["sources"].size(), 31u);  // 30 .txt files + 1 JSONL
  EXPECT_EQ(meta["sources"][30]["documents"], 10);
}

// 24 documents of corpus `seed`, a 500-token vocabulary, shards of 3000 tokens, into dir/out.
PrepareOptions small_dataset(const testing::TempDir& dir, uint64_t seed, const std::string& out) {
  std::vector<std::string> texts;
  PrepareOptions o;
  o.corpus = write_corpus(dir, 24, seed, &texts);
  o.vocab_size = 500;
  o.val_fraction = 0.1;
  o.shard_tokens = 3000;
  o.progress = false;
  o.out = dir / out;
  return o;
}

TEST(Prepare, OutputIsByteIdenticalAcrossRunsAndThreadCounts) {
  testing::TempDir dir;
  PrepareOptions o = small_dataset(dir, 2, "a");
  prepare_dataset(o);
  omp_set_num_threads(1);
  o.out = dir / "b";
  prepare_dataset(o);
  omp_set_num_threads(omp_get_num_procs());
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir / "a")) names.push_back(e.path().filename());
  EXPECT_GE(names.size(), 6u);
  for (const std::string& name : names)
    EXPECT_EQ(io::read_whole_file(dir / "a" / name), io::read_whole_file(dir / "b" / name)) << name;
}

// What the interrupt (Ctrl-C in the Python module) throws ends the run. Until the vocabulary is
// trained it leaves an earlier dataset untouched; after the last block of documents (the last
// shards still open) it leaves out without metadata.json, so unfinished, and without partial shards.
TEST(Prepare, AnInterruptLeavesNoDatasetThatLooksFinished) {
  testing::TempDir dir;
  PrepareOptions o = small_dataset(dir, 3, "out");
  int calls = 0;
  o.interrupt = [&] { ++calls; };
  prepare_dataset(o);
  const int total = calls;
  EXPECT_GT(total, 200);  // once the corpus is read, after each of up to 243 BPE merges and each block
  const std::string finished = io::read_whole_file(o.out / kMetadataFile);
  struct Stop {};
  const auto stop_at = [&](int stop) {
    calls = 0;
    o.interrupt = [&calls, stop] {
      if (++calls == stop) throw Stop{};
    };
    EXPECT_THROW(prepare_dataset(o), Stop);
  };
  for (int stop : {1, 100}) {  // once the corpus is read; in the vocabulary's training
    stop_at(stop);
    EXPECT_EQ(io::read_whole_file(o.out / kMetadataFile), finished) << stop;
  }
  stop_at(total);
  EXPECT_FALSE(std::filesystem::exists(o.out / kMetadataFile));
  EXPECT_NE(error_of([&] { read_dataset(o.out); }).find("no metadata.json"), std::string::npos);
  for (const auto& e : std::filesystem::directory_iterator(o.out))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(Prepare, UsesANamedTokenizerAndCopiesIt) {
  DIFFTX_REQUIRE_DATA("tokenizers/r50k_base.tiktoken");
  testing::TempDir dir;
  dir.write("a.txt", "The whale surfaced.");
  dir.write("b.txt", "Ishmael watched <|endoftext|> from the deck.");
  PrepareOptions o;
  o.corpus = {(dir / "a.txt").string(), (dir / "b.txt").string()};
  o.tokenizer = "r50k_base";
  o.out = dir / "out";
  o.val_fraction = 0.3;
  o.progress = false;
  const auto meta = prepare_dataset(o);
  EXPECT_EQ(meta["tokenizer"]["name"], "r50k_base");
  EXPECT_EQ(meta["tokenizer"]["source"], "r50k_base");
  EXPECT_EQ(meta["dtype"], "uint16");
  const Tokenizer copy = load_tokenizer((dir / "out").string());
  EXPECT_EQ(copy.vocab_size(), 50257);
  EXPECT_EQ(copy.encode("hello world"), (std::vector<int32_t>{31373, 995}));
  // A special-token string inside a document stays text: one end-of-text per document only.
  const auto train = read_split(o.out, meta, "train"), val = read_split(o.out, meta, "val");
  EXPECT_EQ(std::count(train.begin(), train.end(), 50256) + std::count(val.begin(), val.end(), 50256), 2);
}

TEST(Prepare, LargeVocabularyGivesUint32Shards) {
  DIFFTX_REQUIRE_DATA("tokenizers/cl100k_base.tiktoken");
  testing::TempDir dir;
  dir.write("a.txt", "one document");
  PrepareOptions o;
  o.corpus = {(dir / "a.txt").string()};
  o.tokenizer = "cl100k_base";
  o.out = dir / "out";
  o.val_fraction = 0;
  o.progress = false;
  const auto meta = prepare_dataset(o);
  EXPECT_EQ(meta["dtype"], "uint32");
  EXPECT_EQ(Shard(dir / "out" / "train_0000.bin").token_bytes(), 4);
  EXPECT_EQ(meta["splits"]["val"]["tokens"], 0);
}

TEST(Prepare, BadCorporaAndOptionsAreClearErrors) {
  testing::TempDir dir;
  const auto empty = dir.write("empty.txt", "");
  const auto binary = dir.write("blob.txt", std::string("ab\0cd", 5));
  const auto one = dir.write("one.txt", "a single document");
  PrepareOptions o;
  o.vocab_size = 300;
  o.out = dir / "out";
  o.progress = false;
  o.spelling = OptionSpelling::flag;  // as the CLI gives them
  auto run = [&](std::vector<std::string> corpus, double val) {
    o.corpus = std::move(corpus);
    o.val_fraction = val;
    return error_of([&] { prepare_dataset(o); });
  };
  EXPECT_NE(run({empty.string()}, 0.1).find("empty corpus"), std::string::npos);
  EXPECT_NE(run({one.string(), binary.string()}, 0.1).find(binary.string() + ": binary file? NUL byte at byte offset 2"),
            std::string::npos);
  EXPECT_NE(run({one.string()}, 0.1).find("needs at least 2 documents"), std::string::npos);
  EXPECT_NE(run({one.string()}, 1.0).find("--val-fraction 1 is outside [0, 1)"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / kMetadataFile));
  o.vocab_size = 0;
  EXPECT_NE(run({one.string()}, 0).find("give --tokenizer"), std::string::npos);
  o.spelling = OptionSpelling::field;  // as the library's callers (Python) give them
  EXPECT_NE(run({one.string()}, 0).find("give tokenizer NAME_OR_FILE or vocab_size N"), std::string::npos);
  o.vocab_size = 300;
  EXPECT_NE(run({one.string()}, 1.0).find("val_fraction 1 is outside [0, 1)"), std::string::npos);
  EXPECT_NE(run({one.string()}, 0.1).find("cut long ones with max_document_bytes, or val_fraction 0"),
            std::string::npos);
}

TEST(Prepare, ValidationChoiceIsByWholeDocumentsAndLeavesTraining) {
  const std::vector<std::string> docs = {std::string(100, 'a'), std::string(100, 'b'),
                                         std::string(100, 'c'), std::string(100, 'd')};
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  const auto quarter = choose_validation_documents(views, 0.25, OptionSpelling::field);
  EXPECT_EQ(std::count(quarter.begin(), quarter.end(), true), 1);
  const auto most = choose_validation_documents(views, 0.99, OptionSpelling::field);
  EXPECT_EQ(std::count(most.begin(), most.end(), true), 3);  // one stays for training
  EXPECT_EQ(choose_validation_documents(views, 0.25, OptionSpelling::field), quarter);  // deterministic
  const auto none = choose_validation_documents(views, 0, OptionSpelling::field);
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
}

}  // namespace
}  // namespace difftx::data
