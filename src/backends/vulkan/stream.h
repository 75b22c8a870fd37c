// The ordered stream of work a backend issues: dispatches, copies and fills recorded into
// command buffers. A command that reads what an earlier one wrote, or writes what an earlier
// one read or wrote, waits behind a compute/transfer barrier for everything before it; commands
// that touch disjoint bytes, or only read the same ones (a layer's q, k and v products), are
// left free to overlap. So every op sees what the ops before it wrote, as if run one by one.
// Work is submitted in batches (a few in flight, each with its own command buffer, descriptor
// pool, fence and share of the upload staging), and waited for with a timeout: a device that
// stops answering is an error, never a hang. A wait that timed out, a lost device or a failed
// submit leaves the stream refusing further work, with an error naming what went wrong.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipelines.h"
#include "backends/vulkan/profile.h"

namespace difftx::backends::vulkan {

class Stream {
 public:
  Stream(Context& context, Memory& memory);
  ~Stream();  // close()
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // One dispatch of groups (x, y, 1); buffers in the pipeline's binding order (a binding of n
  // descriptors takes n entries).
  void dispatch(const Pipeline& pipeline, std::span<const VkDescriptorBufferInfo> buffers, const void* push,
                uint32_t groups_x, uint32_t groups_y = 1);
  void copy(VkBuffer src, int64_t src_offset, VkBuffer dst, int64_t dst_offset, int64_t bytes);
  void fill_zero(VkBuffer buffer, int64_t offset, int64_t bytes);  // offset and bytes multiples of 4
  // Host memory into a buffer (copied into staging at once, so src may change after the call).
  void upload(VkBuffer dst, int64_t offset, const void* src, int64_t bytes);
  // A buffer's bytes into host memory, after everything issued before.
  void download(void* dst, VkBuffer src, int64_t offset, int64_t bytes);
  // Waits for everything issued.
  void finish();
  // Waits for the work in flight, then destroys what the constructor made; again, nothing. A
  // stream that failed (before, or in this wait) destroys nothing: its work may still be running,
  // or never finish; what went wrong goes to stderr, and the process's exit reclaims the rest.
  void close();
  // False once a wait timed out, the device was lost or a submit failed: work may still be
  // running, so memory it uses must not be freed.
  bool usable() const { return failure_.empty(); }
  // Error once the context is closed ("was closed") or the stream failed (naming how).
  void check_usable() const;
  // Milliseconds the device spent between two points of the stream: the work `record` issues,
  // timed by the device's own clock (timestamp queries). Error on a queue without timestamps.
  double device_milliseconds(const std::function<void()>& record);

 private:
  struct Batch {
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer commands = VK_NULL_HANDLE;
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkQueryPool timestamps = VK_NULL_HANDLE;  // profiling: one after each command, one at the start
    std::vector<const char*> labels;          // profiling: each command's
    int64_t staging_begin = 0, staging_end = 0, staging_head = 0;
    uint32_t sets = 0, descriptors_used = 0, commands_recorded = 0;
    bool recording = false, in_flight = false;
  };
  Batch& open();                            // the batch being recorded, begun if need be
  void submit();                            // the open batch to the queue (not waited for)
  void wait(Batch& batch);                  // its fence, with the timeout
  // What a command reads or writes of a buffer: bytes [offset, offset + range), VK_WHOLE_SIZE to
  // its end.
  struct Access {
    VkBuffer buffer;
    VkDeviceSize offset, range;
    bool write;
  };
  // A barrier before the command where it conflicts with a command since the last barrier (or
  // before every command: DIFFTX_VULKAN_BARRIERS=all, and when profiling, whose per-command times
  // need the commands apart); then its accesses join those since the barrier.
  void order(Batch& batch, std::span<const Access> accesses);
  void barrier(Batch& batch);  // for everything before; clears unordered_
  // Before a command: room for it in the batch (profiling: in its timestamps), else a new batch.
  Batch& room();
  // After a command: counted, and (profiling) timestamped under label, the host's CPU time since
  // room() counted as recording.
  void recorded(Batch& batch, const char* label);
  void read_timestamps(Batch& batch);  // profiling: the finished batch's times into profile_
  // The stream failed (why: kept for every later error; stream.h's header): an error saying so.
  [[noreturn]] void failed(std::string why);
  // A copy into the batch, which has room() for it.
  void record_copy(Batch& batch, VkBuffer src, int64_t src_offset, VkBuffer dst, int64_t dst_offset, int64_t bytes);
  VkDescriptorSet descriptor_set(Batch& batch, const Pipeline& pipeline);

  Context& context_;
  Memory& memory_;
  const Api& api_;
  std::vector<Batch> batches_;
  size_t current_ = 0;
  const uint32_t first_submit_;  // the first batch's commands after a wait for all work (stream.cpp)
  uint32_t submit_after_;        // commands that make the open batch submit itself
  Memory::HostBuffer staging_, readback_;
  uint64_t timeout_ns_;
  bool every_barrier_;
  std::vector<Access> unordered_;  // the accesses of the commands since the last barrier
  std::vector<Access> accesses_;   // a dispatch's (kept to reuse its memory)
  int64_t recording_since_ = 0;    // profiling: the host thread's CPU time when the command began
  std::string failure_;            // what made the stream fail; empty while it works
  std::unique_ptr<Profile> profile_;
};

}  // namespace difftx::backends::vulkan
