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
  // read_dataset: a clear error for a directory that is not a prepared dataset.
  data::check_fits_vocabulary(data::read_dataset(data_dir), config.vocab_size, "the model in " + model_dir.string());
  return data::load_tokenizer(data_dir.string());
}

void write_analysis_json(const std::string& path, const results::Analyses& analyses) {
  if (path.empty()) return;
  write_json_file(path, results::to_json(analyses));
  std::printf("wrote %s\n", path.c_str());
}

}  // namespace difftx::cli
