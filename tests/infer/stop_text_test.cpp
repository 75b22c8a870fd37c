// StopText (infer/stop_text.h): stop strings are cut out also when they span tokens, text that
// may still start one is held back and comes out once it cannot, and UTF-8 stays whole; a
// reasoning block the output opens with is never matched, its closing marker included.
#include <gtest/gtest.h>

#include "infer/stop_text.h"

namespace difftx::infer {
namespace {

std::string feed(StopText& t, const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& p : pieces) out += t.push(p);
  return out;
}

TEST(StopText, CutsAStopStringThatSpansTokens) {
  StopText t({"\nUser:"});
  EXPECT_EQ(feed(t, {"Hello", " there", "\nUs", "er", ": next"}), "Hello there");
  EXPECT_TRUE(t.stopped());
  EXPECT_EQ(t.push("more"), "");
  EXPECT_EQ(t.finish(), "");
}

TEST(StopText, HoldsBackOnlyWhatMayStartAStop) {
  StopText t({"END"});
  EXPECT_EQ(t.push("abcE"), "abc");   // "E" may start "END"
  EXPECT_EQ(t.push("Nx"), "ENx");     // "ENx" cannot
  EXPECT_EQ(t.push("EN"), "");
  EXPECT_FALSE(t.stopped());
  EXPECT_EQ(t.finish(), "EN");        // the end of the stream: what was held comes out
}

TEST(StopText, TheEarliestOfSeveralStopsWins) {
  StopText t({"world", "lo w"});
  EXPECT_EQ(t.stopped_by(), nullptr);
  EXPECT_EQ(feed(t, {"hello world"}), "hel");
  EXPECT_TRUE(t.stopped());
  ASSERT_NE(t.stopped_by(), nullptr);
  EXPECT_EQ(*t.stopped_by(), "lo w");  // the one found (Anthropic's stop_sequence, vLLM's stop_reason)
  StopText together({"abc", "ab"});
  feed(together, {"xabcd"});
  EXPECT_EQ(*together.stopped_by(), "abc");  // starting together: the earlier listed
}

// vLLM's include_stop_str_in_output: the text ends after the stop string that appeared first (the
// earlier listed where two start together), across tokens too, and nothing after it comes out.
TEST(StopText, IncludedStopStringEndsTheText) {
  StopText t({"world", "lo w"}, std::nullopt, true);
  EXPECT_EQ(feed(t, {"hello world and more"}), "hello w");
  StopText spans({"\nUser:"}, std::nullopt, true);
  EXPECT_EQ(feed(spans, {"Hi", "\nUs", "er", ": next"}), "Hi\nUser:");
  EXPECT_EQ(spans.finish(), "");
  StopText together({"ab", "abc"}, std::nullopt, true);
  EXPECT_EQ(feed(together, {"xabcd"}), "xab");
}

// Before a request's min_tokens (push's `look` false) no stop string is looked for, but the start
// of one is still held: "ab" written whole before is text, "bc" begun before and completed after
// is found.
TEST(StopText, NotLookedForBeforeMinTokens) {
  StopText t({"ab"});
  EXPECT_EQ(t.push("xab", false), "xab");
  EXPECT_EQ(t.push("c", true), "c");
  EXPECT_FALSE(t.stopped());
  StopText spans({"bc"});
  EXPECT_EQ(spans.push("a", false), "a");
  EXPECT_EQ(spans.push("b", false), "");
  EXPECT_EQ(spans.push("cd", true), "");
  EXPECT_TRUE(spans.stopped());
}

TEST(StopText, StopStringInsideOneTokenAndMultiByteText) {
  StopText t({"。"});
  // "é" split over two tokens is held until whole; the stop string's three bytes arrive one by one.
  EXPECT_EQ(t.push("caf\xC3"), "caf");
  EXPECT_EQ(t.push("\xA9 ok"), "\xC3\xA9 ok");
  EXPECT_EQ(t.push("\xE3"), "");
  EXPECT_EQ(t.push("\x80"), "");
  EXPECT_EQ(t.push("\x82tail"), "");
  EXPECT_TRUE(t.stopped());
}

TEST(StopText, WithoutStopsOnlyUtf8IsHeld) {
  StopText t({});
  EXPECT_EQ(t.push("a\xF0\x9F"), "a");
  EXPECT_EQ(t.push("\x98\x80!"), "\xF0\x9F\x98\x80!");
  EXPECT_EQ(t.push("\xE2\x82"), "");
  EXPECT_EQ(t.finish(), "\xEF\xBF\xBD");  // an unfinished character at the end is U+FFFD
}

const ReasoningBlock kThink{{"<think>", "</think>"}, false};
const ReasoningBlock kOpenThink{{"<think>", "</think>"}, true};

// Stop strings are matched after the block only: neither the thoughts nor the closing marker (a
// reasoning budget forces it token by token) are cut, and the text after it is, as vLLM skips
// stop strings in reasoning content.
TEST(StopText, NotMatchedInAReasoningBlock) {
  StopText t({"</th", "ink>", "END"}, kThink);
  EXPECT_EQ(feed(t, {"<think>", "I think END", "\n</", "th", "ink>"}), "<think>I think END\n</think>");
  EXPECT_FALSE(t.stopped());
  EXPECT_EQ(feed(t, {"\n\nOK E", "ND more"}), "\n\nOK ");
  EXPECT_TRUE(t.stopped());
  // Open from the start (the prompt opened it): the same, and a stop spanning the marker's end
  // does not reach into the block.
  StopText open({"k>x", "ink>"}, kOpenThink);
  EXPECT_EQ(feed(open, {"a</thi", "nk>x", "y ink> z"}), "a</think>xy ");
  EXPECT_TRUE(open.stopped());
  // A block never closed: all of it comes out.
  StopText cut({"</th"}, kOpenThink);
  EXPECT_EQ(feed(cut, {"x", "</th"}) + cut.finish(), "x</th");
}

// Where the output does not open the block, stop strings match from its first byte; while its
// start may still become the open marker, it is held.
TEST(StopText, OutputWithoutAReasoningBlock) {
  StopText t({"<"}, kThink);
  EXPECT_EQ(t.push("  <th"), "");  // may still be "<think>"
  EXPECT_EQ(t.push("at"), "  ");   // it is not: "<" stops it
  EXPECT_TRUE(t.stopped());
  StopText late({"END"}, kThink);
  EXPECT_EQ(feed(late, {"ab <think> END", "x"}), "ab <think> ");  // a block only at the start
  StopText short_reply({"ink"}, kThink);
  EXPECT_EQ(short_reply.push("\n<th"), "");
  EXPECT_EQ(short_reply.finish(), "\n<th");  // the end: never a block, no stop in it
  StopText none({}, kThink);
  EXPECT_EQ(none.push("<th"), "<th");  // without stop strings nothing is held for the block
}

}  // namespace
}  // namespace difftx::infer
