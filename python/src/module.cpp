// The extension module difftx._difftx: C++ errors as Python exceptions, then each area's bindings.
#include <cstring>

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

namespace {

// difftx::Error and its subclasses as difftx.Error and its subclasses, the message decoded with
// backslash escapes where it holds bytes that are no UTF-8 (a path, a file's bad byte): a plain
// PyErr_SetString would drop such a message whole.
PyObject* error_type = nullptr;
PyObject* engine_full_type = nullptr;
PyObject* diverged_type = nullptr;

void raise(PyObject* type, const std::exception& e) {
  const char* what = e.what();
  PyObject* message = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace");
  if (message == nullptr) return;  // the decode's own error is raised
  PyErr_SetObject(type, message);
  Py_DECREF(message);
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const infer::EngineFull& e) {
    raise(engine_full_type, e);
  } catch (const train::TrainingDiverged& e) {
    raise(diverged_type, e);
  } catch (const Error& e) {
    raise(error_type, e);
  }
}

}  // namespace

void bind_errors(py::module_& m) {
  // The message is difftx's own; a subclass says what kind of failure it was.
  const py::exception<Error> error(m, "Error");
  error.attr("__doc__") = "An error the difftx library raised; the message says what was wrong and what was expected.";
  const py::exception<infer::EngineFull> engine_full(m, "EngineFull", error.ptr());
  const py::exception<train::TrainingDiverged> diverged(m, "TrainingDiverged", error.ptr());
  error_type = error.inc_ref().ptr();  // the module's for good: the translator outlives this call
  engine_full_type = engine_full.inc_ref().ptr();
  diverged_type = diverged.inc_ref().ptr();
  py::register_exception_translator(translate);
}

}  // namespace difftx::python

PYBIND11_MODULE(_difftx, m) {
  namespace py = pybind11;
  using namespace difftx::python;
  m.doc() = "difftx's C++ library: load, score, generate, analyse and train Differential Transformer models";
  bind_errors(m);
  ModelClass model = bind_model(m);
  bind_attention_map(m);
  bind_generate(m, model);
  bind_analyses(m);
  bind_train(m);
}
