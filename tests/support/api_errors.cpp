#include "support/api_errors.h"

#include <gtest/gtest.h>

#include "serve/api_error.h"

namespace difftx::testing {

void expect_api_error(const std::function<void(const std::string&)>& parse, const std::string& body, int status,
                      const std::string& param, const std::string& part) {
  try {
    parse(body);
    ADD_FAILURE() << "accepted: " << body;
  } catch (const serve::ApiError& e) {
    EXPECT_EQ(e.status, status) << body << ": " << e.what();
    EXPECT_EQ(e.param, param) << body << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << body << ": " << e.what();
  }
}

}  // namespace difftx::testing
