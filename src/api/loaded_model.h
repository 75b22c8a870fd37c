// A model directory loaded for an embedding program (the Python module, the C API): the weights,
// the directory's tokenizer, generation defaults and chat template where it has them, and the
// settings its calls run with. Shared and read-only once loaded: every call on it may run on any
// thread at once.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "data/generation_defaults.h"
#include "data/tokenizer.h"
#include "model/model.h"
#include "model/model_io.h"

namespace difftx::api {

struct LoadOptions {
  // The backend by name (backends/backend.h open_backend: cpu, vulkan, vulkan:N); an error names
  // a device that cannot be opened, never falling back to another.
  std::string device = "cpu";
  // as_stored: matrices in the type the files hold (as `difftx generate` and `difftx logits`);
  // f32: widened (as `difftx analyze`).
  model::MatrixPrecision precision = model::MatrixPrecision::as_stored;
  // The KV cache of its engines by name (f32, bf16, int8; checked here), not as the enum: its
  // header, kernels/attention/decode_attention.h, cannot be included beside eval/attention_maps.h.
  std::string kv_dtype = "bf16";
  int threads = 0;  // OpenMP threads of its calls; 0: OMP_NUM_THREADS, else every core
  // Speculative decoding for its engines (api/draft.h): "" or "none" none, "ngram", or a draft
  // model's directory, loaded onto the same device; draft_tokens 0: not given (the default with a
  // draft; anything else without one is an error).
  std::string draft;
  int64_t draft_tokens = 0;
};

struct Draft;

struct LoadedModel {
  LoadedModel(std::filesystem::path dir_, model::Model model_) : dir(std::move(dir_)), model(std::move(model_)) {}

  std::filesystem::path dir;
  std::string device = "cpu";  // the name it was loaded with; model.backend is its backend
  model::Model model;
  std::shared_ptr<data::Tokenizer> tokenizer;  // null: the directory holds none
  data::GenerationDefaults defaults;
  std::optional<chat::ChatTemplate> chat_template;
  std::string chat_template_error;  // why there is no chat_template: none, or it did not parse
  std::string kv_dtype = "bf16";
  int threads = 0;
  std::shared_ptr<const Draft> draft;  // LoadOptions::draft, loaded

  // The tokenizer, or an error saying the directory had none when the model was loaded.
  const data::Tokenizer& require_tokenizer() const;
  // The chat template, or an error saying why there is none.
  const chat::ChatTemplate& require_chat_template() const;
  // An error naming `what` unless the model is on the CPU: the analyses and taps read the
  // activations on the host (a model on Vulkan fails at once, not after its work on the device).
  void require_cpu(const char* what) const;
};

// Errors name the directory and what is wrong with it. A template that does not parse does not
// stop the load: require_chat_template() gives its error.
std::shared_ptr<LoadedModel> load_model(const std::filesystem::path& dir, const LoadOptions& options = {});

// Token ids of text: a tokenizer.json matches special-token text, as transformers does; a
// tiktoken vocabulary reads it as plain text (`difftx tokenize`'s defaults). add_special adds the
// tokenizer's template (Llama 3: BOS).
std::vector<int32_t> encode_text(const data::Tokenizer& tokenizer, std::string_view text, bool add_special);

// The checks of a sequence a forward runs over: not empty, every id in the model's vocabulary,
// at most max_position_embeddings long. Errors name the position and the limits.
void check_sequence(std::span<const int32_t> ids, const model::ModelConfig& config);

// float32 [T, vocab_size] logits of one full forward over ids into out (bit for bit those of
// `difftx logits`), on the model's threads; the ids are checked first.
void sequence_logits(const LoadedModel& m, std::span<const int32_t> ids, float* out);

}  // namespace difftx::api
