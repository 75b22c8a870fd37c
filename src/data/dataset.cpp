#include "data/dataset.h"

#include <cstdio>

#include "core/error.h"
#include "data/file_io.h"
#include "data/tokenizer_files.h"

namespace difftx::data {
namespace fs = std::filesystem;

void check_fits_vocabulary(const DatasetInfo& data, int64_t vocab_size, const std::string& model) {
  DIFFTX_CHECK(data.vocab_size <= vocab_size, data.dir.string(), ": the data's vocabulary has ", data.vocab_size,
               " tokens but ", model, " has vocab_size ", vocab_size, " (data and model do not belong together)");
}

DatasetInfo read_dataset(const fs::path& dir) {
  DIFFTX_CHECK(fs::is_directory(dir), dir.string(),
               ": dataset directory does not exist (make one with difftx prepare)");
  const fs::path meta_path = dir / kMetadataFile;
  DIFFTX_CHECK(fs::is_regular_file(meta_path), dir.string(), ": no ", kMetadataFile,
               " (not a directory written by difftx prepare, or it was interrupted)");
  const std::string where = meta_path.string();
  DatasetInfo info;
  info.dir = dir;
  try {
    info.metadata = nlohmann::json::parse(read_file(meta_path));
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
      for (const auto& shard : s.at("shards")) split.shards.push_back(shard.at("file").get<std::string>());
      info.splits[name] = std::move(split);
    }
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": malformed metadata (", e.what(), ")");
  }
  DIFFTX_CHECK(info.vocab_size > 0, where, ": tokenizer.vocab_size must be positive");
  return info;
}

std::vector<fs::path> tokenizer_files(const fs::path& dir) {
  std::vector<fs::path> files = {dir / kTokenizerRanksFile, dir / kTokenizerSidecarFile};
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
