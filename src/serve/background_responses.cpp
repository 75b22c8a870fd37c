#include "serve/background_responses.h"

#include <algorithm>

#include "serve/api_error.h"
#include "serve/sse.h"

namespace difftx::serve {

void BackgroundRun::add(std::string_view sse) {
  {
    std::lock_guard lock(mutex_);
    partial_.append(sse);
    size_t end;
    while ((end = partial_.find("\n\n")) != std::string::npos) {
      std::string event = partial_.substr(0, end + 2);
      partial_.erase(0, end + 2);
      if (event.starts_with(':')) continue;  // a ping
      bytes_ += static_cast<int64_t>(event.size());
      events_.push_back(std::move(event));
      while (bytes_ > max_bytes_ && events_.size() > 1) {  // the latest kept, the oldest go
        bytes_ -= static_cast<int64_t>(events_.front().size());
        events_.pop_front();
        ++first_;
      }
    }
  }
  changed_.notify_all();
}

void BackgroundRun::finish() {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  changed_.notify_all();
}

BackgroundRun::Read BackgroundRun::next_events(int64_t after, std::chrono::milliseconds timeout,
                                               std::vector<std::string>& out) const {
  std::unique_lock lock(mutex_);
  const int64_t next = std::max<int64_t>(after + 1, 0);
  const auto end = [&] { return first_ + static_cast<int64_t>(events_.size()); };
  changed_.wait_for(lock, timeout, [&] { return finished_ || end() > next || next < first_; });
  if (next < first_) return Read::dropped;
  for (int64_t i = next; i < end(); ++i) out.push_back(events_[static_cast<size_t>(i - first_)]);
  return finished_ && next + static_cast<int64_t>(out.size()) >= end() ? Read::ended : Read::more;
}

int64_t BackgroundRun::first_kept() const {
  std::lock_guard lock(mutex_);
  return first_;
}

void BackgroundRun::wait_finished() const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return finished_; });
}

std::string BackgroundRun::last_event() const {
  std::lock_guard lock(mutex_);
  return events_.empty() ? std::string() : events_.back();
}

int64_t BackgroundRun::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

bool BackgroundRun::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

BackgroundRuns::~BackgroundRuns() {
  for (auto& [id, runner] : runners_)
    if (runner.thread.joinable()) runner.thread.join();
}

void BackgroundRuns::tidy() {
  int64_t bytes = 0;
  for (auto& [id, runner] : runners_)
    if (runner.run->finished()) {
      if (runner.thread.joinable()) runner.thread.join();
      bytes += runner.run->bytes();
    }
  for (auto it = started_.begin(); it != started_.end() && bytes > budget_;) {
    const auto runner = runners_.find(*it);
    if (!runner->second.run->finished()) {
      ++it;
      continue;
    }
    bytes -= runner->second.run->bytes();
    runners_.erase(runner);
    it = started_.erase(it);
  }
}

std::shared_ptr<BackgroundRun> BackgroundRuns::start(const std::string& id, std::function<void(BackgroundRun&)> body) {
  std::lock_guard lock(mutex_);
  tidy();
  size_t running = 0;
  for (const auto& [other, runner] : runners_) running += !runner.run->finished();
  if (running >= max_running_)
    throw ApiError(503, "the server runs " + std::to_string(max_running_) + " background responses already: try again later",
                   "background", "server_busy");
  if (runners_.count(id)) throw ApiError(500, "background response id " + id + " is taken", "", "internal_error");
  auto run = std::make_shared<BackgroundRun>(std::max<int64_t>(budget_ / static_cast<int64_t>(max_running_), 64 << 10));
  std::thread thread([run, body = std::move(body)] { body(*run); });  // before the entry: it may throw
  runners_[id] = Runner{run, std::move(thread)};
  started_.push_back(id);
  return run;
}

std::shared_ptr<BackgroundRun> BackgroundRuns::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  tidy();
  const auto it = runners_.find(id);
  return it == runners_.end() ? nullptr : it->second.run;
}

void BackgroundRuns::forget(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = runners_.find(id);
  if (it == runners_.end() || !it->second.run->finished()) return;
  if (it->second.thread.joinable()) it->second.thread.join();
  started_.remove(id);
  runners_.erase(it);
}

void stream_background_events(std::shared_ptr<BackgroundRun> run, int64_t after, httplib::Response& res) {
  struct Cursor {
    int64_t after;
    std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
  };
  auto cursor = std::make_shared<Cursor>(Cursor{after});
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  if (after + 1 < run->first_kept())
    bad_param("starting_after", "the events up to " + std::to_string(run->first_kept() - 1) +
                                    " are no longer kept (a run keeps its latest events within its share of "
                                    "--responses-store-bytes)");
  res.set_chunked_content_provider("text/event-stream", [run, cursor](size_t, httplib::DataSink& sink) {
    std::vector<std::string> events;
    const BackgroundRun::Read read = run->next_events(cursor->after, std::chrono::milliseconds(250), events);
    std::string out;
    for (const std::string& e : events) out += e;
    cursor->after += static_cast<int64_t>(events.size());
    if (read == BackgroundRun::Read::dropped)
      out = "event: error\ndata: " +
            dump_json({{"type", "error"}, {"code", "events_dropped"},
                       {"message", "this stream fell behind the run: its next events are no longer kept"}}) +
            "\n\n";
    const bool more = read == BackgroundRun::Read::more;
    const auto now = std::chrono::steady_clock::now();
    if (out.empty() && now - cursor->last_write > std::chrono::seconds(1)) out = kSsePing;
    if (!out.empty()) {
      if (!sink.write(out.data(), out.size())) return false;
      cursor->last_write = now;
    }
    if (!more) sink.done();
    return true;
  });
}

}  // namespace difftx::serve
