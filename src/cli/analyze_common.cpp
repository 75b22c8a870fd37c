// What the `difftx analyze` targets share (analyze_targets.h).
#include <cstdio>

#include "cli/analyze_targets.h"
#include "core/error.h"
#include "data/dataset.h"
#include "data/tokenizer_files.h"
#include "io/json_file.h"

namespace difftx::cli {

data::Tokenizer dataset_tokenizer(const std::filesystem::path& data_dir, const std::filesystem::path& model_dir,
                                  const ModelConfig& config) {
  data::read_dataset(data_dir);  // a clear error for a directory that is not a prepared dataset
  data::Tokenizer tokenizer = data::load_tokenizer(data_dir.string());
  DIFFTX_CHECK(tokenizer.vocab_size() <= config.vocab_size, data_dir.string(), ": its tokenizer ", tokenizer.name(),
               " has ", tokenizer.vocab_size(), " tokens but the model in ", model_dir.string(), " has vocab_size ",
               config.vocab_size, ": data and model do not belong together");
  return tokenizer;
}

void write_analysis_json(const std::string& path, const results::Analyses& analyses) {
  if (path.empty()) return;
  write_json_file(path, results::to_json(analyses));
  std::printf("wrote %s\n", path.c_str());
}

}  // namespace difftx::cli
