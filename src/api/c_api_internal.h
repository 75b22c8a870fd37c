// What the files implementing the C API (include/difftx/difftx.h, c_*.cpp) share: the handles,
// the thread-local error and the guard that keeps every C++ exception inside the library.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/draft.h"
#include "api/loaded_model.h"
#include "core/error.h"
#include "difftx/difftx.h"
#include "infer/engine.h"

struct difftx_model {
  std::shared_ptr<difftx::api::LoadedModel> loaded;
};

struct difftx_engine {
  std::shared_ptr<difftx::api::LoadedModel> loaded;  // engines outlive their difftx_model handle
  // Who runs the steps: nobody now, a thread inside difftx_engine_step / _run, or (for good) the
  // engine's own thread (difftx_engine_start). One atomic, so that a step and a start cannot both
  // begin.
  enum class Mode { idle, stepping, started };
  std::atomic<Mode> mode{Mode::idle};
  std::mutex mutex;                   // guards `open` and the ids of requests being submitted
  std::set<int64_t> open;             // requests submitted whose last event has not come yet
  difftx::api::Draft draft;           // difftx_engine_options::draft, which the engine drafts with
  std::unique_ptr<difftx::infer::Engine> engine;  // last: gone before what its callbacks use
};

namespace difftx::api {

// The calling thread's message for difftx_last_error(); never throws (a long message is cut).
void set_error(std::string_view message) noexcept;

// Runs f and returns its result; any exception becomes the thread's error and `on_error` is
// returned instead.
template <typename R, typename F>
R guard(R on_error, F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    set_error("out of memory: a size given to the call, or a file's, asks for more than this machine has");
  } catch (const std::exception& e) {
    set_error(e.what());
  } catch (...) {
    set_error("an unknown error");
  }
  return on_error;
}

// The model behind a handle; a null handle is an error naming the function.
const LoadedModel& model_of(const difftx_model* model, const char* function);
difftx_engine& engine_of(difftx_engine* engine, const char* function);
// A required string argument: null is an error naming it.
const char* required(const char* text, const char* what);
// The buffer rule (difftx.h) for `count` elements needed in a buffer of `capacity`: checks the
// arguments and returns true when they fit; -count(-needed) is the caller's result otherwise.
bool fits(int64_t needed, const void* buffer, int32_t capacity, const char* what);
// The buffer rule for text: copies it with its NUL when it fits; returns the function's result.
int32_t write_text(const std::string& text, char* out, int32_t capacity, const char* what);
// n >= 0 items at `items` (null only when n is 0), as a span.
template <typename T>
std::span<const T> items_of(const T* items, int32_t n, const char* what) {
  DIFFTX_CHECK(n >= 0, what, ": count ", n, " is negative");
  DIFFTX_CHECK(items != nullptr || n == 0, what, ": null with count ", n);
  return {items, static_cast<size_t>(n)};
}
// The messages as the chat template takes them: a JSON array of {role, content}.
nlohmann::json chat_messages(const difftx_chat_message* messages, int32_t n);

// The two directions of a C options struct's fields that stand for C++ options' fields, for a
// function listing the pairs once as f(c_field, cpp_field): the caller's values in, the defaults out.
inline constexpr auto from_c = [](const auto& c, auto& cpp) { cpp = c; };
inline constexpr auto to_c = [](auto& c, const auto& cpp) { c = cpp; };

}  // namespace difftx::api
