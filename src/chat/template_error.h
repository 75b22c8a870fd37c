// The error of rendering a chat template: raise_exception() (its message as the template wrote
// it) and every other render-time failure (a type error, calling an undefined value, ...).
#pragma once
#include "core/error.h"

namespace difftx::chat {

struct TemplateError : difftx::Error {
  using Error::Error;
};
// raise_exception(msg): the message exactly as the template gave it.
struct RaisedError : TemplateError {
  using TemplateError::TemplateError;
};
// Any other render-time failure, once its message names the statement's line.
struct LocatedError : TemplateError {
  using TemplateError::TemplateError;
};

template <typename... Parts>
[[noreturn]] void template_fail(const Parts&... parts) {
  throw TemplateError(concat(parts...));
}

}  // namespace difftx::chat
