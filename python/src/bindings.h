// What the binding files of the Python module share: the loaded model as Python holds it, the
// GIL and signal helpers, and results handed over as Python objects.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include <pybind11/pybind11.h>

#include "data/generation_defaults.h"
#include "data/tokenizer.h"
#include "model/model.h"

namespace difftx {
enum class KvStorage;  // kernels/attention/decode_attention.h, whose AttentionRow eval/attention_maps.h also names
}

namespace difftx::python {

namespace py = pybind11;

// A model directory loaded for Python: the weights, the directory's tokenizer (when it has one)
// and generation defaults, the KV cache type and the threads its calls run on. Python objects
// share it (the Model, its streams), so it lives until the last of them goes.
struct LoadedModel {
  LoadedModel(std::filesystem::path dir_, Model model_) : dir(std::move(dir_)), model(std::move(model_)) {}

  std::filesystem::path dir;
  Model model;
  std::shared_ptr<data::Tokenizer> tokenizer;  // null: the directory holds none
  data::GenerationDefaults defaults;
  KvStorage kv{};  // the KV cache of generation
  int threads = 0;  // 0: OMP_NUM_THREADS, else the core count

  // The tokenizer, or the error `difftx generate` gives for a directory without one.
  const data::Tokenizer& require_tokenizer() const;
};
using ModelHandle = std::shared_ptr<LoadedModel>;

// While alive: OpenMP regions of this thread use `threads` threads (0: unchanged).
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_ = 0;
};

// One sequence of ids (a list of ints or a 1-D integer array) checked against the model: in its
// vocabulary, not empty, at most max_position_embeddings long.
std::vector<int32_t> sequence_ids(const py::handle& ids, const ModelConfig& config);

// Takes the GIL and raises a pending signal's exception (KeyboardInterrupt for Ctrl-C) as
// py::error_already_set; for loops that run with the GIL released.
void check_signals();

// A JSON value as the Python object json.loads would make of it.
py::object to_python(const nlohmann::json& value);

using ModelClass = py::class_<LoadedModel, ModelHandle>;

// Each area's bindings (model.cpp, attention_map.cpp, generate.cpp, analyses.cpp, train.cpp).
ModelClass bind_model(py::module_& m);
void bind_attention_map(py::module_& m);
void bind_generate(py::module_& m, ModelClass& model);
void bind_analyses(py::module_& m);
void bind_train(py::module_& m);

}  // namespace difftx::python
