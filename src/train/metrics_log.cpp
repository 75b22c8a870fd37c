#include "train/metrics_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/json_file.h"

namespace difftx::train {

MetricsLog::MetricsLog(std::filesystem::path path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  DIFFTX_CHECK(fd_ >= 0, path_.string(), ": cannot open for appending (", std::strerror(errno), ")");
}

MetricsLog::~MetricsLog() {
  if (fd_ >= 0) ::close(fd_);
}

void MetricsLog::append(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  // One write() per line: with O_APPEND a line is written whole or, on a full disk, reported.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    DIFFTX_CHECK(n > 0, path_.string(), ": cannot append a line (", n < 0 ? std::strerror(errno) : "nothing written",
                 "); the lines before it are intact");
    done += static_cast<size_t>(n);
  }
}

void MetricsLog::sync() {
  DIFFTX_CHECK(::fsync(fd_) == 0, path_.string(), ": fsync failed (", std::strerror(errno), ")");
}

DroppedMetrics truncate_metrics_after(const std::filesystem::path& path, int64_t last_step) {
  DroppedMetrics dropped;
  if (!std::filesystem::exists(path)) return dropped;
  std::istringstream in(io::read_whole_file(path));
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json record;
    try {
      record = io::parse_json_text(line, path.string());
    } catch (const Error&) {
      ++dropped.unreadable;
      continue;
    }
    const auto step = record.is_object() ? record.find("step") : record.end();
    if (!record.is_object() || step == record.end() || !step->is_number_integer()) {
      ++dropped.unreadable;
    } else if (step->get<int64_t>() > last_step) {
      ++dropped.lines;
    } else {
      kept += line + "\n";
    }
  }
  if (dropped.lines > 0 || dropped.unreadable > 0) io::write_file_atomically(path, kept);
  return dropped;
}

}  // namespace difftx::train
