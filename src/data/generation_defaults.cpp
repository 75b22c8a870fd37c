#include "data/generation_defaults.h"

#include <algorithm>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/json_file.h"

namespace difftx::data {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

constexpr int64_t kMaxId = (1 << 24) - 1;

void add_eos_ids(const json& j, const fs::path& file, std::vector<int32_t>& ids) {
  if (!j.contains("eos_token_id") || j["eos_token_id"].is_null()) return;
  const json& v = j["eos_token_id"];
  const json list = v.is_array() ? v : json::array({v});
  for (const json& id : list) {
    DIFFTX_CHECK(id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() <= kMaxId, file.string(),
                 ": eos_token_id: expected an id in [0, ", kMaxId, "] or a list of them, got ", v.dump().substr(0, 60));
    if (std::find(ids.begin(), ids.end(), id.get<int32_t>()) == ids.end()) ids.push_back(id.get<int32_t>());
  }
}

// The value of `key` in [lo, hi] (`lo_excluded`: (lo, hi]), or none where it is absent or null.
template <typename T>
std::optional<T> number(const json& j, const char* key, double lo, double hi, const fs::path& file,
                        bool lo_excluded = false) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  const json& v = j[key];
  const bool ok = std::is_integral_v<T> ? v.is_number_integer() : v.is_number();
  DIFFTX_CHECK(ok && (lo_excluded ? v.get<double>() > lo : v.get<double>() >= lo) && v.get<double>() <= hi,
               file.string(), ": ", key, ": expected ", std::is_integral_v<T> ? "an integer" : "a number", " in ",
               lo_excluded ? "(" : "[", static_cast<T>(lo), ", ", static_cast<T>(hi), "], got ", v.dump().substr(0, 40));
  return v.get<T>();
}

}  // namespace

GenerationDefaults read_generation_defaults(const fs::path& dir) {
  GenerationDefaults d;
  const fs::path config_file = dir / "config.json", generation_file = dir / "generation_config.json";
  if (const auto config = io::read_json_object_if_present(config_file)) add_eos_ids(*config, config_file, d.eos_ids);
  const auto g = io::read_json_object_if_present(generation_file);
  if (!g) return d;
  add_eos_ids(*g, generation_file, d.eos_ids);
  d.temperature = number<double>(*g, "temperature", 0, 100, generation_file);
  d.top_p = number<double>(*g, "top_p", 0, 1, generation_file);
  d.top_k = number<int64_t>(*g, "top_k", 0, kMaxId, generation_file);
  d.max_new_tokens = number<int64_t>(*g, "max_new_tokens", 0, 1e9, generation_file);
  d.min_p = number<double>(*g, "min_p", 0, 1, generation_file);
  d.repetition_penalty = number<double>(*g, "repetition_penalty", 0, 10, generation_file, true);
  if (g->contains("do_sample") && (*g)["do_sample"] == false) d.temperature = 0.0;
  return d;
}

PromptFrame prompt_frame(const Tokenizer& tokenizer, const GenerationDefaults& defaults) {
  PromptFrame f;
  if (tokenizer.tiktoken_family()) {
    // difftx's training shards put the end-of-text token before every document
    // (data/dataset.h), so the prompt starts as a document does.
    f.prefix = f.stop = {tokenizer.end_of_text()};
  } else {
    f.prefix = tokenizer.parts().prefix;
    if (defaults.eos_ids.empty()) f.stop = {tokenizer.end_of_text()};
  }
  for (int32_t id : defaults.eos_ids)
    if (std::find(f.stop.begin(), f.stop.end(), id) == f.stop.end()) f.stop.push_back(id);
  return f;
}

}  // namespace difftx::data
