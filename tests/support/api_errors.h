// The server's request errors in tests: a request body that must be refused with a given status,
// naming a given field.
#pragma once
#include <functional>
#include <string>

namespace difftx::testing {

// Fails the test unless parse(body) throws serve::ApiError with `status`, `param` and `part` in its
// message (part empty: any message).
void expect_api_error(const std::function<void(const std::string&)>& parse, const std::string& body, int status,
                      const std::string& param, const std::string& part = "");

}  // namespace difftx::testing
