// The tokenizer of a model directory for the commands that generate (generate, serve).
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "data/tokenizer.h"
#include "model/config.h"

namespace difftx::cli {

// The model directory's own tokenizer (difftx train copies it into every checkpoint; a Hugging
// Face directory holds tokenizer.json), or the one --tokenizer names; it must fit the model's
// vocabulary.
data::Tokenizer load_model_tokenizer(const std::filesystem::path& dir, const std::optional<std::string>& override_name,
                                     const ModelConfig& config);

}  // namespace difftx::cli
