// The test vectors that ship with the npm package gpt-tokenizer (data/TestPlans.txt): for each
// encoding, sample text and the ids tiktoken gives for it.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "data/tokenizer_files.h"
#include "data_fixtures.h"
#include "io/input_file.h"

namespace difftx::data {
namespace {

struct Vector {
  std::string sample;
  std::vector<int32_t> ids;
  int line;
};

// Blocks of "EncodingName: X", "Sample: TEXT", "Encoded: [1, 2, 3]" separated by blank lines.
std::map<std::string, std::vector<Vector>> read_test_plans() {
  const std::string text = io::read_whole_file(data_root() / "gpt-tokenizer" / "TestPlans.txt");
  std::map<std::string, std::vector<Vector>> plans;
  std::istringstream in(text);
  std::string line, encoding;
  Vector v;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.rfind("EncodingName: ", 0) == 0) {
      encoding = line.substr(14);
    } else if (line.rfind("Sample: ", 0) == 0) {
      v = Vector{line.substr(8), {}, line_no};
    } else if (line.rfind("Encoded: ", 0) == 0) {
      std::string list = line.substr(9);
      for (char& c : list)
        if (c == '[' || c == ']' || c == ',') c = ' ';
      std::istringstream ids(list);
      for (int32_t id; ids >> id;) v.ids.push_back(id);
      plans[encoding].push_back(v);
    }
  }
  return plans;
}

class TestPlans : public ::testing::TestWithParam<std::string> {};

TEST_P(TestPlans, EveryVectorEncodesAndDecodes) {
  DIFFTX_REQUIRE_DATA("gpt-tokenizer/TestPlans.txt");
  const std::string encoding = GetParam();
  const auto plans = read_test_plans();
  ASSERT_TRUE(plans.count(encoding)) << "no vectors for " << encoding << " in TestPlans.txt";
  const auto& vectors = plans.at(encoding);
  ASSERT_GE(vectors.size(), 50u);
  const Tokenizer tok = load_tokenizer(encoding);
  for (const Vector& v : vectors) {
    EXPECT_EQ(tok.encode(v.sample), v.ids) << encoding << ", TestPlans.txt line " << v.line
                                           << ": '" << v.sample << "'";
    EXPECT_EQ(tok.decode(v.ids), v.sample) << encoding << ", TestPlans.txt line " << v.line;
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizer, TestPlans,
                         ::testing::Values("r50k_base", "p50k_base", "p50k_edit", "cl100k_base",
                                           "o200k_base"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace difftx::data
