// The extension module difftx._difftx: C++ errors as Python exceptions, then each area's bindings.
#include <nlohmann/json.hpp>

#include "bindings.h"
#include "core/error.h"
#include "infer/engine.h"
#include "train/trainer.h"

namespace difftx::python {

void check_signals() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

py::object to_python(const nlohmann::json& value) {
  return py::module_::import("json").attr("loads")(value.dump());
}

}  // namespace difftx::python

PYBIND11_MODULE(_difftx, m) {
  namespace py = pybind11;
  using namespace difftx::python;
  m.doc() = "difftx's C++ library: load, score, generate, analyse and train Differential Transformer models";
  // The message is difftx's own; a subclass says what kind of failure it was. Translators run
  // newest first, so the subclasses come after their base.
  auto& error = py::register_exception<difftx::Error>(m, "Error");
  error.attr("__doc__") = "An error the difftx library raised; the message says what was wrong and what was expected.";
  py::register_exception<difftx::infer::EngineFull>(m, "EngineFull", error.ptr());
  py::register_exception<difftx::train::TrainingDiverged>(m, "TrainingDiverged", error.ptr());
  ModelClass model = bind_model(m);
  bind_attention_map(m);
  bind_generate(m, model);
  bind_analyses(m);
  bind_train(m);
}
