#include "support/streamed_reply.h"

#include <gtest/gtest.h>

namespace difftx::testing {

serve::ReplyParts streamed_reply(const serve::ReplyFormat& format, std::string_view text,
                                 const std::vector<size_t>& cuts) {
  serve::ReplyStream stream(format);
  serve::ReplyParts sum;
  size_t from = 0;
  for (size_t k = 0; k <= cuts.size(); ++k) {
    const size_t to = k < cuts.size() ? cuts[k] : text.size();
    const serve::ReplyDelta d = stream.push(text.substr(from, to - from), k == cuts.size());
    sum.reasoning += d.reasoning;
    sum.content += d.content;
    for (const serve::ToolCallDelta& c : d.calls) {
      EXPECT_EQ(c.index < sum.calls.size(), c.name.empty()) << text;
      if (c.index < sum.calls.size()) {
        EXPECT_EQ(c.id, "") << text;  // the id comes with the name
      }
      if (c.index == sum.calls.size()) sum.calls.push_back({c.name, "", c.id});
      if (c.index < sum.calls.size()) sum.calls[c.index].arguments += c.arguments;
    }
    from = to;
  }
  EXPECT_EQ(stream.calls_sent(), sum.calls.size()) << text;
  return sum;
}

}  // namespace difftx::testing
