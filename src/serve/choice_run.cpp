#include "serve/choice_run.h"

#include "serve/api_error.h"

namespace difftx::serve {

void ChoiceRun::submit(std::vector<infer::Request> requests) {
  // More than the engine holds at once would be a 503 whatever the load, retried forever.
  const infer::EngineOptions& o = engine_.options();
  if (static_cast<int64_t>(requests.size()) > o.max_queue + o.max_running)
    throw ApiError(400, concat(requests.size(), " choices (n times the prompts) are more than this server takes at once (",
                               o.max_queue + o.max_running, ": --max-queue plus --max-running)"),
                   "n", "invalid_value");
  submitted_ = Clock::now();
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].on_event = [shared = shared_, i](const infer::TokenEvent& e) {
      {
        std::lock_guard lock(shared->mutex);
        shared->events.push_back({i, e, Clock::now()});
        if (e.finish != infer::FinishReason::none) ++shared->finished;
      }
      shared->ready.notify_one();
    };
    try {
      ids_.push_back(engine_.submit(std::move(requests[i])));
    } catch (const infer::EngineFull& e) {
      cancel();
      throw ApiError(503, std::string("the server is busy: ") + e.what(), "", "server_busy");
    } catch (const Error& e) {
      cancel();
      throw ApiError(400, e.what(), "prompt", "invalid_request");
    }
  }
}

std::vector<ChoiceEvent> ChoiceRun::take(std::chrono::milliseconds timeout) {
  std::unique_lock lock(shared_->mutex);
  shared_->ready.wait_for(lock, timeout, [&] { return !shared_->events.empty(); });
  std::vector<ChoiceEvent> out(std::make_move_iterator(shared_->events.begin()),
                               std::make_move_iterator(shared_->events.end()));
  shared_->events.clear();
  for (const ChoiceEvent& e : out) taken_finished_ += e.event.finish != infer::FinishReason::none;
  return out;
}

bool ChoiceRun::finished() const { return taken_finished_ == ids_.size(); }

void ChoiceRun::cancel() {
  if (finished()) return;
  for (infer::Engine::RequestId id : ids_) engine_.cancel(id);
}

}  // namespace difftx::serve
