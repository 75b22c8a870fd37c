#include "infer/model_prompt.h"

#include "core/error.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"

namespace difftx::infer {
namespace fs = std::filesystem;

data::Tokenizer load_model_tokenizer(const fs::path& dir, const std::optional<std::string>& override_name,
                                     const model::ModelConfig& config) {
  if (!override_name)
    DIFFTX_CHECK(data::has_tokenizer_files(dir), dir.string(), ": no tokenizer in the model directory (",
                 data::kTokenizerFilesNamed, "; difftx train puts the first in every checkpoint); name one with "
                 "--tokenizer");
  data::Tokenizer tokenizer = data::load_tokenizer(override_name ? *override_name : dir.string());
  DIFFTX_CHECK(tokenizer.vocab_size() <= config.vocab_size, "tokenizer ", tokenizer.name(), " has ",
               tokenizer.vocab_size(), " tokens but the model in ", dir.string(), " has vocab_size ", config.vocab_size,
               ": the tokenizer does not belong to this model");
  return tokenizer;
}

FramedPrompt frame_prompt(const data::Tokenizer& tokenizer, const data::GenerationDefaults& defaults,
                          const std::string& prompt, const model::ModelConfig& config, const std::string& dir) {
  const data::PromptFrame frame = data::prompt_frame(tokenizer, defaults);
  for (int32_t id : frame.stop)
    DIFFTX_CHECK(id < config.vocab_size, dir, ": eos_token_id ", id, " is outside the vocabulary of ",
                 config.vocab_size);
  FramedPrompt out{frame.prefix, frame.prefix.size(), frame.stop};
  tokenizer.encode_append(prompt, out.ids,
                          tokenizer.tiktoken_family() ? data::Specials::as_text : data::Specials::allowed);
  return out;
}

}  // namespace difftx::infer
