// Background responses' runs (serve/background_responses.h): a run's stream text split into its
// events (pings dropped), read from any point while it goes and after it ends; the registry's
// runners on their own threads, at most so many at once, finished runs' events kept within a budget.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "serve/api_error.h"
#include "serve/background_responses.h"

namespace difftx::serve {
namespace {

using namespace std::chrono_literals;

using Read = BackgroundRun::Read;

TEST(BackgroundResponses, ARunsEventsAreReadFromAnyPoint) {
  BackgroundRun run(1 << 20);
  run.add("event: a\ndata: {\"n\":0}\n\nevent: b\ndata: {\"n\"");  // an event split between writes
  run.add(":1}\n\n: ping\n\n");
  std::vector<std::string> events;
  EXPECT_EQ(run.next_events(-1, 0ms, events), Read::more);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], "event: a\ndata: {\"n\":0}\n\n");
  EXPECT_EQ(events[1], "event: b\ndata: {\"n\":1}\n\n");
  EXPECT_EQ(run.last_event(), events[1]);
  events.clear();
  EXPECT_EQ(run.next_events(1, 10ms, events), Read::more);  // nothing past the last yet: waits, then says so
  EXPECT_TRUE(events.empty());
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);
    run.add("event: c\ndata: {}\n\n");
    run.finish();
  });
  EXPECT_EQ(run.next_events(1, 5s, events), Read::ended);  // woken by the event, the last
  writer.join();
  ASSERT_EQ(events.size(), 1u);
  events.clear();
  EXPECT_EQ(run.next_events(2, 5s, events), Read::ended);  // ended, and everything was given
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(run.finished());
  EXPECT_EQ(run.next_events(0, 0ms, events), Read::ended);
  EXPECT_EQ(events.size(), 2u);
  events.clear();
  run.next_events(-1, 0ms, events);
  int64_t bytes = 0;
  for (const std::string& e : events) bytes += static_cast<int64_t>(e.size());
  EXPECT_EQ(run.bytes(), bytes);  // the events' text, the pings not counted
}

TEST(BackgroundResponses, ARunKeepsItsLatestEventsWithinItsShare) {
  BackgroundRun run(100);
  for (int i = 0; i < 5; ++i) run.add("data: " + std::string(34, static_cast<char>('a' + i)) + "\n\n");  // 42 bytes each
  EXPECT_EQ(run.first_kept(), 3);  // 2 x 42 kept
  EXPECT_EQ(run.bytes(), 84);
  std::vector<std::string> events;
  EXPECT_EQ(run.next_events(0, 0ms, events), Read::dropped);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(run.next_events(2, 0ms, events), Read::more);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0][6], 'd');
}

TEST(BackgroundResponses, RunnersGoOnTheirOwnThreadsWithinLimits) {
  std::atomic<bool> release{false};
  const auto waits = [&](BackgroundRun& run) {
    while (!release.load() && !run.cancel_requested()) std::this_thread::sleep_for(1ms);
    run.add(std::string(100, 'x') + "\n\n");
    run.finish();
  };
  BackgroundRuns runs(250, 2);
  const auto a = runs.start("a", waits);
  runs.start("b", waits);
  try {
    runs.start("c", waits);
    ADD_FAILURE() << "a third run while two go";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 503);
  }
  EXPECT_EQ(runs.find("a"), a);
  EXPECT_EQ(runs.find("c"), nullptr);
  runs.forget("a");  // still going: kept
  EXPECT_EQ(runs.find("a"), a);
  a->request_cancel();
  a->wait_finished();
  EXPECT_TRUE(a->finished());
  runs.start("c", waits);  // room again
  release = true;
  runs.find("b")->wait_finished();
  runs.find("c")->wait_finished();
  // 3 x 102 bytes of finished events past the 250 kept: the oldest goes at the next find (or start).
  EXPECT_EQ(runs.find("a"), nullptr);
  runs.start("d", [](BackgroundRun& run) { run.finish(); });
  EXPECT_NE(runs.find("b"), nullptr);
  EXPECT_NE(runs.find("c"), nullptr);
  runs.forget("b");
  EXPECT_EQ(runs.find("b"), nullptr);
  try {
    runs.start("c", waits);
    ADD_FAILURE() << "an id started twice";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 500);
  }
}

}  // namespace
}  // namespace difftx::serve
