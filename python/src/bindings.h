// What the binding files of the Python module share: the loaded model as Python holds it, the
// GIL and signal helpers, and results handed over as Python objects. The module is a client of
// the library's C++ API (src/api/ and the rooms below it).
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include <pybind11/pybind11.h>

#include "api/loaded_model.h"
#include "api/thread_scope.h"

namespace difftx::python {

namespace py = pybind11;

// The loaded model (api/loaded_model.h), shared by the Python objects that use it (the Model,
// its streams): it lives until the last of them goes.
using LoadedModel = api::LoadedModel;
using ModelHandle = std::shared_ptr<LoadedModel>;
using api::ThreadScope;

// One sequence of ids (a list of ints or a 1-D integer array) checked against the model: in its
// vocabulary, not empty, at most max_position_embeddings long.
std::vector<int32_t> sequence_ids(const py::handle& ids, const model::ModelConfig& config);

// The GIL released for the scope, for C++ work that other Python threads run beside. CPython ends
// a thread that takes the GIL back while the interpreter is finalizing (a daemon thread, the only
// kind still running then) with pthread_exit, which a C++ frame turns into std::terminate; so
// from the interpreter's exit on (wait_out_exit) such a thread waits for the process to end
// instead (GilHeld likewise).
class GilReleased {
 public:
  GilReleased();
  ~GilReleased();
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  PyThreadState* state_;
};

// The GIL held for the scope, from a thread that released it (a callback of C++ work).
class GilHeld {
 public:
  GilHeld();
  ~GilHeld();
  GilHeld(const GilHeld&) = delete;
  GilHeld& operator=(const GilHeld&) = delete;

 private:
  PyGILState_STATE state_;
};

// Takes the GIL and raises a pending signal's exception (KeyboardInterrupt for Ctrl-C) as
// py::error_already_set; for loops that run with the GIL released. Looks at most every 20 ms
// (a call sooner returns at once), so a loop may call it at every step.
void check_signals();

// A JSON value as the Python object json.loads would make of it.
py::object to_python(const nlohmann::json& value);

using ModelClass = py::class_<LoadedModel, ModelHandle>;

// difftx.Error, EngineFull and TrainingDiverged, and the translator that raises them (module.cpp).
void bind_errors(py::module_& m);
// From the interpreter's exit on, threads coming back from difftx's work wait for the process to
// end instead of taking the GIL (GilReleased, GilHeld).
void wait_out_exit();
// Each area's bindings (model.cpp, attention_map.cpp, generate.cpp, analyses.cpp, train.cpp).
ModelClass bind_model(py::module_& m);
void bind_attention_map(py::module_& m);
void bind_generate(py::module_& m, ModelClass& model);
void bind_analyses(py::module_& m);
void bind_train(py::module_& m);

}  // namespace difftx::python
