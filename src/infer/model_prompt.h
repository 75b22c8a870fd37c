// What generating from a model directory needs beside the weights, as `difftx generate` and the
// Python module both take it: the directory's tokenizer and the prompt framed as a training
// document starts (data/generation_defaults.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "data/generation_defaults.h"
#include "data/tokenizer.h"
#include "model/config.h"

namespace difftx::infer {

// The model directory's own tokenizer (difftx train copies it into every checkpoint; a Hugging
// Face directory holds tokenizer.json), or the one override_name names; it must fit the model's
// vocabulary.
data::Tokenizer load_model_tokenizer(const std::filesystem::path& dir, const std::optional<std::string>& override_name,
                                     const model::ModelConfig& config);

struct FramedPrompt {
  std::vector<int32_t> ids;   // the frame's prefix, then the prompt's tokens
  size_t prefix = 0;          // how many of ids the frame put first
  std::vector<int32_t> stop;  // drawing any of these ends generation
};

// The frame's prefix (difftx: an end-of-text token; Hugging Face: the tokenizer's BOS) and the
// prompt's tokens (a tokenizer.json matches special-token text in the prompt, as transformers
// does); the end-of-sequence ids must lie in the vocabulary (errors name `dir`).
FramedPrompt frame_prompt(const data::Tokenizer& tokenizer, const data::GenerationDefaults& defaults,
                          const std::string& prompt, const model::ModelConfig& config, const std::string& dir);

}  // namespace difftx::infer
