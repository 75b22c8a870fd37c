// RUN_DIR/metrics.jsonl: one JSON object per line, appended and flushed to the kernel line by
// line, every write checked (a full disk is an Error naming the file, never a silently lost or
// torn line), and fsync'd before each checkpoint is promoted, so every line of a step at or
// before the latest checkpoint survives a crash. On resume, lines after the checkpoint's step
// (of a run cut off after its last checkpoint) are dropped, and the caller says so.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace difftx::train {

class MetricsLog {
 public:
  // Opens for appending (creating the file).
  explicit MetricsLog(std::filesystem::path path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  void append(const nlohmann::json& record);
  void sync();  // fsync: every appended line is durable

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// What truncate_metrics_after removed.
struct DroppedMetrics {
  int64_t lines = 0;       // of steps after the checkpoint
  int64_t unreadable = 0;  // lines that were not a JSON object with an integer "step" (a torn last line)
};

// Rewrites the log (atomically) without the lines of steps after `last_step`.
DroppedMetrics truncate_metrics_after(const std::filesystem::path& path, int64_t last_step);

}  // namespace difftx::train
