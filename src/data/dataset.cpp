#include "data/dataset.h"

#include <cstdio>
#include <set>

#include "core/error.h"
#include "data/tokenizer_files.h"
#include "io/input_file.h"
#include "io/json_file.h"

namespace difftx::data {
namespace fs = std::filesystem;
namespace {

// A shard must be a plain file name inside the dataset directory, listed once over all the
// splits (a val shard listed as train too would leak validation data into training).
void check_shard_name(const std::string& name, std::set<std::string>& seen, const std::string& where) {
  const bool plain = !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
                     name.find('\0') == std::string::npos;
  DIFFTX_CHECK(plain, where, ": shard file ", io::json_value_for_message(nlohmann::json(name)),
               " must be a file name inside the dataset directory (no '/', '.' or '..')");
  DIFFTX_CHECK(seen.insert(name).second, where, ": shard file '", name, "' is listed twice");
}

}  // namespace

void check_fits_vocabulary(const DatasetInfo& data, int64_t vocab_size, const std::string& model) {
  DIFFTX_CHECK(data.vocab_size <= vocab_size, data.dir.string(), ": the data's vocabulary has ", data.vocab_size,
               " tokens but ", model, " has vocab_size ", vocab_size, " (data and model do not belong together)");
}

DatasetInfo read_dataset(const fs::path& dir) {
  io::require_directory(dir, "dataset directory", " (make one with difftx prepare)");
  const fs::path meta_path = dir / kMetadataFile;
  DIFFTX_CHECK(fs::is_regular_file(meta_path), dir.string(), ": no ", kMetadataFile,
               " (not a directory written by difftx prepare, or it was interrupted)");
  const std::string where = meta_path.string();
  DatasetInfo info;
  info.dir = dir;
  std::set<std::string> shard_names;
  try {
    info.metadata = io::read_json_file(meta_path);
    const auto& j = info.metadata;
    DIFFTX_CHECK(j.value("format", "") == "difftx-dataset", where,
                 ": expected \"format\": \"difftx-dataset\"");
    DIFFTX_CHECK(j.value("version", 0) == 1, where, ": unsupported version (expected 1)");
    info.vocab_size = j.at("tokenizer").at("vocab_size").get<int64_t>();
    info.end_of_text = j.at("tokenizer").at("end_of_text").get<int32_t>();
    for (const auto& [name, s] : j.at("splits").items()) {
      SplitInfo split;
      split.documents = s.at("documents").get<int64_t>();
      split.bytes = s.at("bytes").get<int64_t>();
      split.tokens = s.at("tokens").get<int64_t>();
      for (const auto& shard : s.at("shards")) {
        split.shards.push_back(shard.at("file").get<std::string>());
        check_shard_name(split.shards.back(), shard_names, where);
      }
      info.splits[name] = std::move(split);
    }
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": malformed metadata (", e.what(), ")");
  }
  DIFFTX_CHECK(info.end_of_text >= 0 && info.end_of_text < info.vocab_size, where,
               ": tokenizer.end_of_text ", info.end_of_text, " is not an id below vocab_size ", info.vocab_size);
  DIFFTX_CHECK(info.vocab_size > 0 && info.vocab_size <= kMaxVocabSize, where,
               ": tokenizer.vocab_size must be in [1, ", kMaxVocabSize, "], got ", info.vocab_size);
  return info;
}

std::vector<fs::path> tokenizer_files(const fs::path& dir) {
  // The files metadata.json lists for the tokenizer (tiktoken's pair, or a tokenizer.json);
  // directories from before that list name tiktoken's pair.
  const nlohmann::json metadata = read_dataset(dir).metadata;
  const nlohmann::json* listed = metadata.contains("tokenizer") && metadata["tokenizer"].is_object() &&
                                         metadata["tokenizer"].contains("files")
                                     ? &metadata["tokenizer"]["files"]
                                     : nullptr;
  std::vector<fs::path> files;
  if (listed) {
    DIFFTX_CHECK(listed->is_array() && !listed->empty() && listed->size() <= 8, (dir / kMetadataFile).string(),
                 ": tokenizer.files must list 1 to 8 file names");
    for (const nlohmann::json& name : *listed) {
      DIFFTX_CHECK(name.is_string() && fs::path(name.get<std::string>()).filename() == name.get<std::string>() &&
                       name.get<std::string>() != ".." && !name.get<std::string>().empty(),
                   (dir / kMetadataFile).string(), ": tokenizer.files must hold plain file names in the directory");
      files.push_back(dir / name.get<std::string>());
    }
  } else {
    files = {dir / kTokenizerRanksFile, dir / kTokenizerSidecarFile};
  }
  for (const auto& f : files)
    DIFFTX_CHECK(fs::is_regular_file(f), dir.string(), ": missing tokenizer file ",
                 f.filename().string(), " (expected a directory written by difftx prepare)");
  return files;
}

std::string shard_file_name(const std::string& split, int64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "_%04lld.bin", static_cast<long long>(index));
  return split + buf;
}

}  // namespace difftx::data
