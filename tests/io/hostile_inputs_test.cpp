// Hostile inputs: seeded mutants of every file the loaders read (config.json, metadata.json,
// token shards, tokenizer ranks and sidecar, any JSON), fed to the loaders. Each must end in a
// difftx::Error or in a correct result; any other exception (or a crash, under ASan/UBSan:
// `scripts/test asan`) fails. docs/RELIABILITY.md gives the counts.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "data/dataset.h"
#include "data/hf_tokenizer.h"
#include "data/loader.h"
#include "data/tokenizer_files.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "model/config.h"
#include "support/testing.h"
#include "support/word_dataset.h"

namespace difftx::io {
namespace {

namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// One mutation of `text`, chosen by rng: a flipped byte, a truncation, a duplicated or deleted
// span, an absurd number, a deep nest, a repeated key or a byte-order mark.
std::string mutate(const std::string& text, Rng& rng) {
  std::string s = text;
  const auto at = [&] { return s.empty() ? size_t{0} : static_cast<size_t>(rng.next_u64() % s.size()); };
  switch (rng.next_u64() % 8) {
    case 0:
      if (!s.empty()) s[at()] = static_cast<char>(rng.next_u64());
      break;
    case 1:
      s.resize(at());
      break;
    case 2: {
      const size_t begin = at(), length = std::min<size_t>(s.size() - begin, 1 + rng.next_u64() % 16);
      s.insert(begin, s.substr(begin, length));
      break;
    }
    case 3: {
      const size_t begin = at();
      s.erase(begin, 1 + rng.next_u64() % 16);
      break;
    }
    case 4: {  // a digit run replaced by an absurd number
      static const char* absurd[] = {"4611686018427387904", "-1", "0", "1e999", "9223372036854775808",
                                     "-9223372036854775809", "1.5", "NaN", "65537", "2147483648"};
      const size_t digit = s.find_first_of("0123456789", at());
      if (digit != std::string::npos) {
        const size_t end = s.find_first_not_of("0123456789.e", digit);
        s.replace(digit, end - digit, absurd[rng.next_u64() % 10]);
      }
      break;
    }
    case 5: {  // a value nested deeply
      const size_t colon = s.find(':', at());
      if (colon != std::string::npos) s.insert(colon + 1, std::string(2000, '[') + "1" + std::string(2000, ']') + ",\"x\":");
      break;
    }
    case 6: {  // the first key repeated
      const size_t brace = s.find('{');
      const size_t comma = brace == std::string::npos ? brace : s.find(',', brace);
      if (comma != std::string::npos) s.insert(comma + 1, s.substr(brace + 1, comma - brace - 1) + ",");
      break;
    }
    default:
      s.insert(0, "\xEF\xBB\xBF");
      break;
  }
  return s;
}

// Runs `load`; true when it succeeded, false on a difftx::Error; anything else fails the test.
bool ends_cleanly(const std::function<void()>& load, const std::string& what) {
  try {
    load();
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw a " << typeid(e).name() << " that is not difftx::Error: " << e.what();
    return false;
  }
}

struct Tally {
  int tried = 0, accepted = 0;
};

// Mutates `original` `count` times into `path`, calling `load` on each; restores it after.
Tally mutate_and_load(const fs::path& path, int count, uint64_t seed, const std::function<void()>& load) {
  const std::string original = read_whole_file(path);
  Rng rng(seed);
  Tally tally;
  for (int i = 0; i < count; ++i) {
    std::string bytes = original;
    for (uint64_t m = 0, n = 1 + rng.next_u64() % 3; m < n; ++m) bytes = mutate(bytes, rng);
    write_text(path, bytes);
    ++tally.tried;
    if (ends_cleanly(load, path.string() + " mutant " + std::to_string(i))) ++tally.accepted;
  }
  write_text(path, original);
  return tally;
}

class HostileInputs : public ::testing::Test {
 protected:
  testing::WordDataset dataset;
  fs::path data() const { return dataset.data(); }
};

TEST_F(HostileInputs, ConfigMutantsEndInAnErrorOrAValidConfig) {
  const fs::path path = dataset.root / "config.json";
  write_json_file(path, nlohmann::json{{"model_type", "difftx"}, {"attention", "diff"}, {"vocab_size", 300},
                                       {"hidden_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", 2},
                                       {"max_position_embeddings", 256}, {"rope_scaling", nullptr}});
  const Tally t = mutate_and_load(path, 400, 13, [&] { model::config_from_file(path.string()).validate(); });
  EXPECT_EQ(t.tried, 400);
  EXPECT_LT(t.accepted, t.tried / 2) << "most mutants of a config should be refused";
}

TEST_F(HostileInputs, MetadataMutantsEndInAnErrorOrAReadableDataset) {
  const fs::path path = data() / data::kMetadataFile;
  const Tally t = mutate_and_load(path, 300, 17, [&] {
    const data::DatasetInfo info = data::read_dataset(data());
    for (const auto& [name, split] : info.splits)
      for (const std::string& shard : split.shards) EXPECT_EQ(fs::path(shard).filename().string(), shard);
    data::TokenLoader loader(data(), "train", {.batch = 2, .seq_len = 8});
    std::vector<int32_t> in(16), tg(16);
    loader.next(in.data(), tg.data());
    for (const int32_t id : in) EXPECT_TRUE(id >= 0 && id < info.vocab_size) << id;
  });
  EXPECT_EQ(t.tried, 300);
}

// The shard lists themselves: a name that leaves the directory, a shard listed twice, a val
// shard listed as train too (validation data leaking into training).
TEST_F(HostileInputs, ShardListsStayInsideTheDatasetAndNameEachShardOnce) {
  const fs::path path = data() / data::kMetadataFile;
  const nlohmann::json original = read_json_file(path);
  const std::string train0 = original["splits"]["train"]["shards"][0]["file"];
  const std::string val0 = original["splits"]["val"]["shards"][0]["file"];
  const auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& expected) {
    nlohmann::json j = original;
    edit(j["splits"]["train"]["shards"]);
    write_json_file(path, j);
    const std::string msg = testing::error_of([&] { data::read_dataset(data()); });
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  };
  const std::vector<std::string> outside = {"../" + train0, "/etc/passwd", "..", ".", "", "sub/" + train0};
  for (const std::string& name : outside)
    refused([&](nlohmann::json& shards) { shards[0]["file"] = name; },
            "must be a file name inside the dataset directory (no '/', '.' or '..')");
  refused([&](nlohmann::json& shards) { shards.push_back(shards[0]); }, "shard file '" + train0 + "' is listed twice");
  refused([&](nlohmann::json& shards) { shards[0]["file"] = val0; }, "shard file '" + val0 + "' is listed twice");
  write_json_file(path, original);
  EXPECT_NO_THROW(data::read_dataset(data()));
}

TEST_F(HostileInputs, ShardMutantsEndInAnErrorOrIdsInsideTheVocabulary) {
  const fs::path path = data() / data::shard_file_name("train", 0);
  const Tally t = mutate_and_load(path, 200, 19, [&] {
    data::TokenLoader loader(data(), "train", {.batch = 4, .seq_len = 16, .seed = 3});
    std::vector<int32_t> in(64), tg(64);
    for (int step = 0; step < 4; ++step) {
      loader.next(in.data(), tg.data());
      for (const int32_t id : in) ASSERT_TRUE(id >= 0 && id < loader.vocab_size()) << id;
    }
  });
  EXPECT_EQ(t.tried, 200);
}

TEST_F(HostileInputs, TokenizerMutantsEndInAnErrorOrATokenizerThatRoundTrips) {
  for (const char* file : {data::kTokenizerSidecarFile, data::kTokenizerRanksFile}) {
    const fs::path path = data() / file;
    const Tally t = mutate_and_load(path, 150, 23, [&] {
      const data::Tokenizer tokenizer = data::load_tokenizer(data().string());
      const std::string text = "alpha beta gamma, delta!";
      EXPECT_EQ(tokenizer.decode(tokenizer.encode(text)), text);
    });
    EXPECT_EQ(t.tried, 150);
  }
}

TEST_F(HostileInputs, ValidTextOfAnyShapeTokenizes) {
  const data::Tokenizer tokenizer = data::load_tokenizer(data().string());
  const std::string spaces = "a" + std::string(10'000'000, ' ') + "b";  // beyond PCRE2's default match limit
  EXPECT_EQ(tokenizer.decode(tokenizer.encode(spaces)), spaces);
}

TEST(HostileJson, DeepNestingAndRepeatedKeysAreRefusedNamingTheSource) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(testing::error_of([&] { parse_json_text(deep, "deep.json"); }).find("deep.json: JSON nested deeper than"),
            std::string::npos);
  const std::string deep_value = "{\"rope_scaling\": " + std::string(100000, '[') + "}";
  EXPECT_NE(testing::error_of([&] { parse_json_text(deep_value, "c.json"); }).find("nested deeper"), std::string::npos);
  EXPECT_NE(testing::error_of([&] { parse_json_text(R"({"a": {"b": 1, "b": 2}})", "d.json"); })
                .find("d.json names 'b' twice"),
            std::string::npos);
  EXPECT_EQ(parse_json_text(std::string(200, '[') + std::string(200, ']'), "ok.json").size(), 1u);
}

// Values of another type than a reader expects (what tokenizer_fuzz found first: a sidecar's
// "version": "1" escaped as nlohmann's type_error, "unexpected error" on the command line).
TEST_F(HostileInputs, ValuesOfTheWrongTypeAreErrorsNamingTheFile) {
  const fs::path sidecar = data() / data::kTokenizerSidecarFile;
  const nlohmann::json original = read_json_file(sidecar);
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"version", "1"}, {"format", 1}, {"name", 5}, {"end_of_text", nlohmann::json::array()}}) {
    nlohmann::json j = original;
    j[key] = value;
    write_json_file(sidecar, j);
    EXPECT_NE(testing::error_of([&] { data::load_tokenizer(data().string()); }).find(sidecar.string()),
              std::string::npos)
        << key;
  }
  write_json_file(sidecar, original);
  const fs::path hf = dataset.root / "tokenizer.json";
  for (const char* text : {R"({"pre_tokenizer": {"type": 5}, "model": {}})",
                           R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [7]}, "model": {}})",
                           R"({"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": [1]}})"}) {
    write_text(hf, text);
    EXPECT_NE(testing::error_of([&] { data::read_hf_tokenizer(hf); }).find(hf.string()), std::string::npos) << text;
  }
}

TEST(HostileJson, MessagesShowLargeValuesBySize) {
  nlohmann::json big = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i) big.push_back(i);
  EXPECT_EQ(json_value_for_message(big), "an array of 100000 elements");
  EXPECT_LE(json_value_for_message(std::string(10000, 'x')).size(), 60u);
}

TEST(HostileFiles, AFifoIsRefusedWithoutBlocking) {
  testing::WordDataset dataset;
  const fs::path fifo = dataset.root / "config.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(testing::error_of([&] { read_whole_file(fifo); }).find("not a regular file (a FIFO)"), std::string::npos);
  EXPECT_NE(testing::error_of([&] { model::config_from_file(fifo.string()); }).find("a FIFO"), std::string::npos);
}

}  // namespace
}  // namespace difftx::io
