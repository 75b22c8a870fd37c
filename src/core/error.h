// Errors: one exception type whose message names what was wrong and what was expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace difftx {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Concatenates its arguments with operator<< into one message.
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  throw Error(concat(parts...));
}

}  // namespace difftx

// DIFFTX_CHECK(cond, "tensor q: expected ", n, " rows") throws difftx::Error when cond is false.
#define DIFFTX_CHECK(cond, ...)                      \
  do {                                               \
    if (!(cond)) ::difftx::fail(__VA_ARGS__);        \
  } while (0)
