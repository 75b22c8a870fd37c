// The extension module difftx._difftx: C++ errors as Python exceptions, then each area's bindings.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "bindings.h"
#include "core/error.h"
#include "infer/engine.h"
#include "train/trainer.h"

namespace difftx::python {

namespace {

std::atomic<bool> exiting{false};  // the interpreter's atexit handlers have begun

bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return exiting || Py_IsFinalizing() != 0;
#else
  return exiting || _Py_IsFinalizing() != 0;
#endif
}

// Where the interpreter is finalizing, this thread never takes the GIL: it sleeps until the
// process ends.
void wait_out_finalization() {
  while (finalizing()) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace

GilReleased::GilReleased() : state_(PyEval_SaveThread()) {}
GilReleased::~GilReleased() {
  wait_out_finalization();
  PyEval_RestoreThread(state_);
}

GilHeld::GilHeld() {
  wait_out_finalization();
  state_ = PyGILState_Ensure();
}
GilHeld::~GilHeld() { PyGILState_Release(state_); }

void check_signals() {
  // At most every 20 ms on a thread: taking the GIL can wait out another Python thread's time
  // slice (5 ms), and the loops call this per step, merge or row.
  thread_local std::chrono::steady_clock::time_point last{};
  const auto now = std::chrono::steady_clock::now();
  if (now - last < std::chrono::milliseconds(20)) return;
  last = now;
  GilHeld gil;
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

void wait_out_exit() {
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    exiting = true;
    // A thread already waiting for the GIL to come back from difftx's work takes it now and goes
    // on (to wait out the exit at its next return): at finalization none is left waiting, where
    // CPython would end it.
    py::gil_scoped_release release;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }));
}

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
  wait_out_exit();
  ModelClass model = bind_model(m);
  bind_attention_map(m);
  bind_generate(m, model);
  bind_analyses(m);
  bind_train(m);
}
