// StopText (infer/stop_text.h): stop strings are cut out also when they span tokens, text that
// may still start one is held back and comes out once it cannot, and UTF-8 stays whole.
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
  EXPECT_EQ(feed(t, {"hello world"}), "hel");
  EXPECT_TRUE(t.stopped());
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

}  // namespace
}  // namespace difftx::infer
