// A prepared dataset directory, as `difftx prepare` writes it:
//   metadata.json                 sources (with sha256), tokenizer, splits and their shards
//   tokenizer.tiktoken(.json)     the tokenizer the ids belong to (tokenizer_files.h)
//   train_0000.bin ...            token shards (shard.h), documents each preceded by
//   val_0000.bin ...              the end-of-text token
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace difftx::data {

inline constexpr const char* kMetadataFile = "metadata.json";
// Token ids are int32 and tables are indexed by id; a hostile file must not make us allocate
// gigabytes (the tokenizer readers use the same bound).
inline constexpr int64_t kMaxVocabSize = int64_t{1} << 24;

struct SplitInfo {
  int64_t documents = 0;
  int64_t bytes = 0;   // UTF-8 bytes of text
  int64_t tokens = 0;  // end-of-text tokens included
  std::vector<std::string> shards;  // file names in the dataset directory, in stream order
};

struct DatasetInfo {
  std::filesystem::path dir;
  int64_t vocab_size = 0;
  int32_t end_of_text = 0;
  std::map<std::string, SplitInfo> splits;  // "train", "val"
  nlohmann::json metadata;                  // the whole metadata.json
};

// Reads DIR/metadata.json. Errors: missing directory or file, malformed metadata.
DatasetInfo read_dataset(const std::filesystem::path& dir);

// The one check that data and a model belong together: every id of the dataset must be below
// the model's vocab_size. `model` names it in the error ("the model in runs/x", a config path):
// "DIR: the data's vocabulary has N tokens but MODEL has vocab_size M (data and model do not
// belong together)".
void check_fits_vocabulary(const DatasetInfo& data, int64_t vocab_size, const std::string& model);

// The tokenizer files of a prepared dataset (for copying into checkpoints).
std::vector<std::filesystem::path> tokenizer_files(const std::filesystem::path& dir);

// "train_0000.bin": the name of shard `index` of a split.
std::string shard_file_name(const std::string& split, int64_t index);

}  // namespace difftx::data
