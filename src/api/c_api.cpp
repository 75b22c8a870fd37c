// The C API (include/difftx/difftx.h): errors, models, tokens, logits, chat templates.
#include <climits>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "api/c_api_internal.h"
#include "data/generation_defaults.h"
#include "model/config.h"

namespace difftx::api {
namespace {

constexpr size_t kErrorBytes = 4096;
thread_local char last_error[kErrorBytes] = "";

}  // namespace

void set_error(std::string_view message) noexcept {
  const size_t n = std::min(message.size(), kErrorBytes - 1);
  std::memcpy(last_error, message.data(), n);
  last_error[n] = '\0';
}

const LoadedModel& model_of(const difftx_model* model, const char* function) {
  DIFFTX_CHECK(model != nullptr && model->loaded, function, ": the model is null");
  return *model->loaded;
}

difftx_engine& engine_of(difftx_engine* engine, const char* function) {
  DIFFTX_CHECK(engine != nullptr && engine->engine, function, ": the engine is null");
  return *engine;
}

const char* required(const char* text, const char* what) {
  DIFFTX_CHECK(text != nullptr, what, " is null");
  return text;
}

bool fits(int64_t needed, const void* buffer, int32_t capacity, const char* what) {
  DIFFTX_CHECK(capacity >= 0, what, ": capacity ", capacity, " is negative");
  DIFFTX_CHECK(buffer != nullptr || capacity == 0, what, ": the buffer is null with capacity ", capacity);
  DIFFTX_CHECK(needed <= INT32_MAX, what, ": ", needed, " elements are more than an int32_t count can say");
  if (needed <= capacity) return true;
  set_error(concat(what, ": capacity ", capacity, " is too small for the ", needed, " needed"));
  return false;
}

int32_t write_text(const std::string& text, char* out, int32_t capacity, const char* what) {
  const int64_t needed = static_cast<int64_t>(text.size()) + 1;
  if (!fits(needed, out, capacity, what)) return static_cast<int32_t>(-needed);
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return static_cast<int32_t>(text.size());
}

nlohmann::json chat_messages(const difftx_chat_message* messages, int32_t n) {
  const auto list = items_of(messages, n, "messages");
  DIFFTX_CHECK(!list.empty(), "messages: none given");
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    DIFFTX_CHECK(list[i].role && list[i].content, "messages[", i, "]: the role or the content is null");
    out.push_back({{"role", list[i].role}, {"content", list[i].content}});
  }
  return out;
}

}  // namespace difftx::api

using namespace difftx;
using namespace difftx::api;

extern "C" {

#define DIFFTX_STRING2(x) #x
#define DIFFTX_STRING(x) DIFFTX_STRING2(x)

const char* difftx_version(void) {
  return DIFFTX_STRING(DIFFTX_VERSION_MAJOR) "." DIFFTX_STRING(DIFFTX_VERSION_MINOR) "." DIFFTX_STRING(
      DIFFTX_VERSION_PATCH);
}

const char* difftx_last_error(void) { return last_error; }

void difftx_string_free(char* text) { std::free(text); }

difftx_model* difftx_model_load(const char* dir, const char* device) {
  return guard<difftx_model*>(nullptr, [&] {
    LoadOptions o;
    if (device) {
      DIFFTX_CHECK(*device != '\0', "device: an empty name (NULL or \"cpu\" for the CPU)");
      o.device = device;
    }
    return new difftx_model{load_model(required(dir, "dir"), o)};
  });
}

void difftx_model_free(difftx_model* model) { delete model; }

int32_t difftx_vocab_size(const difftx_model* model) {
  return guard<int32_t>(-1, [&] {
    return static_cast<int32_t>(model_of(model, "difftx_vocab_size").model.config.vocab_size);
  });
}

int32_t difftx_context_length(const difftx_model* model) {
  return guard<int32_t>(-1, [&] {
    return static_cast<int32_t>(model_of(model, "difftx_context_length").model.config.max_position_embeddings);
  });
}

int32_t difftx_model_metadata(const difftx_model* model, char* json, int32_t capacity) {
  return guard<int32_t>(INT32_MIN, [&] {
    const LoadedModel& m = model_of(model, "difftx_model_metadata");
    const model::ModelConfig& c = m.model.config;
    const data::GenerationDefaults& d = m.defaults;
    nlohmann::json defaults = nlohmann::json::object();
    if (d.max_new_tokens) defaults["max_new_tokens"] = *d.max_new_tokens;
    if (d.temperature) defaults["temperature"] = *d.temperature;
    if (d.top_k) defaults["top_k"] = *d.top_k;
    if (d.top_p) defaults["top_p"] = *d.top_p;
    const nlohmann::json j = {
        {"path", m.dir.string()},
        {"device", m.device},
        {"variant", kernels::attention_kind_name(c.attention)},
        {"num_parameters", c.total_parameters()},
        {"config", model::config_to_json(c)},
        {"tokenizer", m.tokenizer ? nlohmann::json{{"name", m.tokenizer->name()},
                                                   {"vocab_size", m.tokenizer->vocab_size()}}
                                  : nlohmann::json(nullptr)},
        {"chat_template", m.chat_template.has_value()},
        {"eos_ids", m.tokenizer ? data::prompt_frame(*m.tokenizer, d).stop : d.eos_ids},
        {"generation_defaults", defaults}};
    // A directory name that is not UTF-8 is written with U+FFFD, not refused.
    return write_text(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), json, capacity, "json");
  });
}

int32_t difftx_tokenize(const difftx_model* model, const char* text, int32_t add_special, int32_t* ids,
                        int32_t capacity) {
  return guard<int32_t>(INT32_MIN, [&]() -> int32_t {
    const LoadedModel& m = model_of(model, "difftx_tokenize");
    const std::vector<int32_t> out = encode_text(m.require_tokenizer(), required(text, "text"), add_special != 0);
    const int64_t n = static_cast<int64_t>(out.size());
    if (!fits(n, ids, capacity, "ids")) return static_cast<int32_t>(-n);
    std::copy(out.begin(), out.end(), ids);
    return static_cast<int32_t>(n);
  });
}

int32_t difftx_detokenize(const difftx_model* model, const int32_t* ids, int32_t n, char* text, int32_t capacity) {
  return guard<int32_t>(INT32_MIN, [&] {
    const data::Tokenizer& t = model_of(model, "difftx_detokenize").require_tokenizer();
    const std::span<const int32_t> list = items_of(ids, n, "ids");
    for (size_t i = 0; i < list.size(); ++i)
      DIFFTX_CHECK(list[i] >= 0 && list[i] < t.vocab_size(), "ids: id ", list[i], " at position ", i,
                   " is outside the tokenizer's vocabulary [0, ", t.vocab_size(), ")");
    return write_text(t.decode(list), text, capacity, "text");
  });
}

int32_t difftx_logits(difftx_model* model, const int32_t* ids, int32_t n, float* out) {
  return guard<int32_t>(-1, [&] {
    const LoadedModel& m = model_of(model, "difftx_logits");
    const std::span<const int32_t> list = items_of(ids, n, "ids");
    DIFFTX_CHECK(out != nullptr, "out is null");
    sequence_logits(m, list, out);
    return 0;
  });
}

int32_t difftx_chat_template(const difftx_model* model, const difftx_chat_message* messages, int32_t n,
                             int32_t add_generation_prompt, char* text, int32_t capacity) {
  return guard<int32_t>(INT32_MIN, [&] {
    const LoadedModel& m = model_of(model, "difftx_chat_template");
    const chat::ChatTemplate& tmpl = m.require_chat_template();
    return write_text(tmpl.render(chat_messages(messages, n), add_generation_prompt != 0), text, capacity, "text");
  });
}

}  // extern "C"
