#include "support/peak_memory.h"

#include <malloc.h>
#include <omp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <string>

namespace difftx::testing {
namespace {

// VmHWM of this process in KiB, or -1 when /proc/self/status lacks it.
int64_t high_water_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

// Returns the heap's free pages to the system and starts VmHWM again from the resident set now
// (clear_refs 5, Linux 4.0): so memory that earlier work in this process freed but kept resident
// is not reused unseen, and the parent's old peak does not hide the body's.
void start_measuring() {
  ::malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";
}

void write_all(int fd, const std::string& s) {
  for (size_t done = 0; done < s.size();) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The child's side: reports "OK <kib>" or "ERR <message>" on fd and exits without running
// the parent's atexit handlers or flushing its copied stdio buffers. It runs on one thread: the
// OpenMP threads of a parent that has used them do not survive the fork, and libgomp's next team
// would wait for them forever.
[[noreturn]] void run_child(int fd, const std::function<void(const std::function<void()>&)>& body) {
  std::string report;
  omp_set_num_threads(1);
  try {
    int64_t mark = -1;
    body([&] {
      start_measuring();
      mark = high_water_kib();
    });
    const int64_t end = high_water_kib();
    if (mark < 0 || end < 0) throw std::runtime_error("VmHWM unreadable, or body never called mark()");
    report = "OK " + std::to_string(end - mark);
  } catch (const std::exception& e) {
    report = std::string("ERR ") + e.what();
  }
  write_all(fd, report);
  ::_exit(0);
}

}  // namespace

int64_t peak_growth_kib_in_child(const std::function<void(const std::function<void()>& mark)>& body,
                                 int timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], body);
  }
  ::close(fds[1]);

  std::string report;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    report.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);

  if (timed_out) throw std::runtime_error("measured child ran past " + std::to_string(timeout_s) + " s");
  if (report.rfind("OK ", 0) == 0) return std::stoll(report.substr(3));
  if (report.rfind("ERR ", 0) == 0) throw std::runtime_error("measured child failed: " + report.substr(4));
  throw std::runtime_error("measured child died (wait status " + std::to_string(status) + ") without a report");
}

}  // namespace difftx::testing
