// What a model directory says about generating from it, beyond its weights: Hugging Face
// directories carry the end-of-sequence ids in config.json and generation_config.json
// (eos_token_id: an int or a list) and sampling defaults in generation_config.json; the
// tokenizer says what a prompt starts with (difftx: the end-of-text token that precedes every
// document; tokenizer.json: its post-processor's prefix, BOS for Llama 3).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "data/tokenizer.h"

namespace difftx::data {

struct GenerationDefaults {
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<int64_t> top_k, max_new_tokens;
  std::vector<int32_t> eos_ids;  // from config.json, then generation_config.json, no repeats
};

// Reads DIR/config.json and DIR/generation_config.json where present. generation_config.json's
// do_sample: false means greedy (temperature 0), as in transformers. Errors name the file and key.
GenerationDefaults read_generation_defaults(const std::filesystem::path& dir);

struct PromptFrame {
  std::vector<int32_t> prefix;  // ids put before the prompt's
  std::vector<int32_t> stop;    // drawing any of these ends generation
};
PromptFrame prompt_frame(const Tokenizer& tokenizer, const GenerationDefaults& defaults);

}  // namespace difftx::data
