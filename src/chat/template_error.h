// The error of rendering a chat template: raise_exception() (its message as the template wrote
// it) and every other render-time failure (a type error, calling an undefined value, ...).
#pragma once
#include "core/error.h"

namespace difftx::chat {

struct TemplateError : difftx::Error {
  using Error::Error;
};

template <typename... Parts>
[[noreturn]] void template_fail(const Parts&... parts) {
  throw TemplateError(concat(parts...));
}

}  // namespace difftx::chat
