// The engine requests of one HTTP request (its choices), and the events they stream, queued for
// the HTTP thread. Whatever is unfinished when the run ends (a client gone, an error) is
// cancelled, so its KV blocks are freed.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "infer/engine.h"

namespace difftx::serve {

using Clock = std::chrono::steady_clock;

struct ChoiceEvent {
  size_t choice = 0;
  infer::TokenEvent event;
  Clock::time_point at;  // when the engine sent it
};

class ChoiceRun {
 public:
  explicit ChoiceRun(infer::Engine& engine) : engine_(engine), shared_(std::make_shared<Shared>()) {}
  ~ChoiceRun() { cancel(); }
  ChoiceRun(const ChoiceRun&) = delete;
  ChoiceRun& operator=(const ChoiceRun&) = delete;

  // Submits every request, or none: a full queue is ApiError 503 (with a Retry-After), a request
  // the engine refuses a 400 with its message.
  void submit(std::vector<infer::Request> requests);
  // The events that arrived, waiting up to `timeout` for the first.
  std::vector<ChoiceEvent> take(std::chrono::milliseconds timeout);
  bool finished() const;  // every choice has sent its last event
  void cancel();
  size_t size() const { return ids_.size(); }
  Clock::time_point submitted() const { return submitted_; }

 private:
  struct Shared {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<ChoiceEvent> events;
    size_t finished = 0;
  };
  infer::Engine& engine_;
  std::shared_ptr<Shared> shared_;  // also held by the engine's callbacks
  std::vector<infer::Engine::RequestId> ids_;
  Clock::time_point submitted_;
  size_t taken_finished_ = 0;  // last events handed out by take()
};

}  // namespace difftx::serve
