#include "cli/model_tokenizer.h"

#include "core/error.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"

namespace difftx::cli {

namespace fs = std::filesystem;

data::Tokenizer load_model_tokenizer(const fs::path& dir, const std::optional<std::string>& override_name,
                                     const ModelConfig& config) {
  if (!override_name)
    DIFFTX_CHECK(fs::exists(dir / data::kTokenizerRanksFile) || fs::exists(dir / data::kHfTokenizerFile),
                 dir.string(), ": no tokenizer in the model directory (", data::kTokenizerRanksFile, " and ",
                 data::kTokenizerSidecarFile, ", which difftx train puts in every checkpoint, or ",
                 data::kHfTokenizerFile, "); name one with --tokenizer");
  data::Tokenizer tokenizer = data::load_tokenizer(override_name ? *override_name : dir.string());
  DIFFTX_CHECK(tokenizer.vocab_size() <= config.vocab_size, "tokenizer ", tokenizer.name(), " has ",
               tokenizer.vocab_size(), " tokens but the model in ", dir.string(), " has vocab_size ", config.vocab_size,
               ": the tokenizer does not belong to this model");
  return tokenizer;
}

}  // namespace difftx::cli
