// Peak resident-set growth of a piece of work, measured in a forked child process.
//
// Linux starts a new process's high-water mark (VmHWM) at its resident set at fork, so a
// measurement in a fresh child sees neither the test process's earlier peaks nor memory that
// malloc kept resident after an earlier free, and needs no /proc/self/clear_refs support.
// The parent must not have run an OpenMP parallel region before (libgomp is not fork-safe):
// ctest runs each test in its own process, so build inputs inside `body`.
#pragma once
#include <cstdint>
#include <functional>

namespace difftx::testing {

// Runs body(mark) in a child: body prepares its inputs, calls mark(), then does the work to
// measure. Returns the growth of VmHWM from mark() to the end of body, in KiB. Throws
// std::runtime_error with the child's message if body throws, the child dies, or it runs
// past timeout_s.
int64_t peak_growth_kib_in_child(const std::function<void(const std::function<void()>& mark)>& body,
                                 int timeout_s = 300);

}  // namespace difftx::testing
