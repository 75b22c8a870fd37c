// Exceptions and OpenMP: an exception that leaves a parallel region calls std::terminate
// (SIGABRT), and a thread that throws before a barrier leaves the others waiting forever. A
// region whose work can fail (on user data: a tokenizer's or a split pattern's errors; on
// memory: a growing vector) runs each work item through ParallelErrors::run, which catches
// everything. The exception of the lowest failing item is kept and items above it are skipped;
// after the region, rethrow() throws it on the calling thread, so the error is the one a serial
// loop would have met first, whatever the timing. Regions whose work cannot throw do without it;
// docs/RELIABILITY.md lists every region and why.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>

namespace difftx {

class ParallelErrors {
 public:
  // Runs fn() as work item `item` (items are numbered in the order a serial loop runs them).
  template <typename Fn>
  void run(int64_t item, Fn&& fn) noexcept {
    if (item > first_failed_.load(std::memory_order_relaxed)) return;  // a lower item has failed
    try {
      fn();
    } catch (...) {
      keep(item, std::current_exception());
    }
  }

  bool failed() const { return first_failed_.load() != kNone; }
  // After the region: throws the kept exception, if any.
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  void keep(int64_t item, std::exception_ptr error) noexcept;

  std::atomic<int64_t> first_failed_{kNone};
  std::exception_ptr error_;
};

}  // namespace difftx
