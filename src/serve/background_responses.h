// OpenAI's background responses (`background: true`, serve/responses_request.h): a response
// generated apart from the request that asked for it. That request is answered at once, with the
// Response queued (or, with `stream`, with its events as they come; the run goes on if the client
// leaves), and the run's Response is kept in the store (response_store.h) as it goes: in_progress,
// then completed, incomplete, failed or cancelled. A run's stream events are kept, so that
// GET /v1/responses/{id}?stream=true&starting_after=N reads them from any point, while it runs and
// after (a run's latest events within its share of a budget of bytes; finished runs' within the
// budget, the oldest runs dropped first); POST /v1/responses/{id}/cancel stops it. Each run has a thread; the server holds at most a fixed
// number of runs going at once.
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace difftx::serve {

// One run's events, in order (an event's index is its sequence_number), and whether it ended. It
// keeps its latest events within `max_bytes`: past that the oldest go, and reading from before the
// first kept is refused.
class BackgroundRun {
 public:
  explicit BackgroundRun(int64_t max_bytes) : max_bytes_(max_bytes) {}
  // The runner: stream text as it is written (split into events at blank lines; pings dropped).
  void add(std::string_view sse);
  void finish();  // the runner: nothing more comes
  void request_cancel() { cancel_.store(true); }
  bool cancel_requested() const { return cancel_.load(); }
  enum class Read { more, ended, dropped };
  // The events after the `after`th (-1: from the first) into `out`, waiting up to `timeout` for one
  // where there is none yet: `ended` once the run has ended and every event was given, `dropped`
  // where the events asked for are no longer kept (none given).
  Read next_events(int64_t after, std::chrono::milliseconds timeout, std::vector<std::string>& out) const;
  int64_t first_kept() const;  // the index of the oldest event kept
  void wait_finished() const;
  std::string last_event() const;  // "" before any
  int64_t bytes() const;
  bool finished() const;

 private:
  const int64_t max_bytes_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::deque<std::string> events_;  // events first_ .. first_ + size - 1
  int64_t first_ = 0;
  std::string partial_;  // an event's text not yet ended
  int64_t bytes_ = 0;
  bool finished_ = false;
  std::atomic<bool> cancel_{false};
};

class BackgroundRuns {
 public:
  // Finished runs' events are kept within `budget_bytes`, and each run's within its share of it
  // (budget_bytes / max_running, at least 64 KiB); at most `max_running` runs go at once.
  BackgroundRuns(int64_t budget_bytes, size_t max_running) : budget_(budget_bytes), max_running_(max_running) {}
  ~BackgroundRuns();  // joins every runner: their engine requests must have ended or been cancelled
  BackgroundRuns(const BackgroundRuns&) = delete;
  BackgroundRuns& operator=(const BackgroundRuns&) = delete;

  // A new run under `id`, `body` run on a thread of its own (it must call the run's finish() last);
  // a 503 where max_running runs are going.
  std::shared_ptr<BackgroundRun> start(const std::string& id, std::function<void(BackgroundRun&)> body);
  // null: none (or forgotten). Finished runs are tidied first, here as in start(), so that reading
  // runs, not only starting new ones, joins the threads of those that ended.
  std::shared_ptr<BackgroundRun> find(const std::string& id);
  void forget(const std::string& id);  // a finished run's events go (one still going stays)

 private:
  struct Runner {
    std::shared_ptr<BackgroundRun> run;
    std::thread thread;
  };
  void tidy();  // under the lock: finished runners joined, the oldest finished runs past the budget forgotten

  const int64_t budget_;
  const size_t max_running_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Runner> runners_;
  std::list<std::string> started_;  // ids, oldest first
};

// Writes `run`'s events after the `after`th to `res` as an event stream, following the run until it
// ends (pings while it waits); leaving does not stop the run. A 400 where those events are no longer
// kept; a reader that falls so far behind that they go gets an `error` event and the end.
void stream_background_events(std::shared_ptr<BackgroundRun> run, int64_t after, httplib::Response& res);

}  // namespace difftx::serve
