#include "support/thread_ranks.h"

#include <omp.h>

#include <barrier>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

namespace difftx::testing {
namespace {

struct Shared {
  explicit Shared(int ranks) : sync(ranks), slots(ranks) {}
  std::barrier<> sync;
  std::vector<void*> slots;  // each rank's buffer in the current collective
};

template <typename T>
void add_in_rank_order(const std::vector<void*>& slots, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T sum = static_cast<const T*>(slots[0])[i];
    for (size_t r = 1; r < slots.size(); ++r) sum += static_cast<const T*>(slots[r])[i];
    out[i] = sum;
  }
}

class ThreadCommunicator final : public dist::Communicator {
 public:
  ThreadCommunicator(Shared& shared, int rank) : s_(shared), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(s_.slots.size()); }
  std::string description() const override { return "threads"; }

  // Every collective: publish this rank's buffer, wait, read the others', wait (after which
  // no rank reads this collective's buffers any more).
  void all_reduce(void* data, int64_t n, dist::DType type) override {
    std::vector<unsigned char> sum(n * 8);
    publish(data);
    switch (type) {
      case dist::DType::f32: add_in_rank_order(s_.slots, reinterpret_cast<float*>(sum.data()), n); break;
      case dist::DType::f64: add_in_rank_order(s_.slots, reinterpret_cast<double*>(sum.data()), n); break;
      case dist::DType::u64: add_in_rank_order(s_.slots, reinterpret_cast<uint64_t*>(sum.data()), n); break;
    }
    s_.sync.arrive_and_wait();
    std::memcpy(data, sum.data(), n * (type == dist::DType::f32 ? 4 : 8));
  }
  void reduce_scatter_sum(const float* send, float* recv, int64_t shard) override {
    publish(const_cast<float*>(send));
    std::vector<void*> mine;
    for (void* p : s_.slots) mine.push_back(static_cast<float*>(p) + rank_ * shard);
    add_in_rank_order(mine, recv, shard);
    s_.sync.arrive_and_wait();
  }
  void all_gather_bytes(void* data, int64_t bytes) override {
    publish(data);
    for (int r = 0; r < size(); ++r)
      if (r != rank_)
        std::memcpy(static_cast<char*>(data) + r * bytes, static_cast<char*>(s_.slots[r]) + r * bytes, bytes);
    s_.sync.arrive_and_wait();
  }
  void broadcast(void* data, int64_t bytes, int root) override {
    publish(data);
    if (rank_ != root) std::memcpy(data, s_.slots[root], bytes);
    s_.sync.arrive_and_wait();
  }
  void stop_all_ranks(int) override { std::abort(); }

 private:
  void publish(void* data) {
    s_.slots[rank_] = data;
    s_.sync.arrive_and_wait();
  }
  Shared& s_;
  int rank_;
};

}  // namespace

void run_ranks(int ranks, const std::function<void(dist::Communicator&)>& body) {
  Shared shared(ranks);
  std::vector<std::exception_ptr> errors(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      // One OpenMP thread per rank, as under mpirun -x OMP_NUM_THREADS=1: every rank's parallel
      // regions would otherwise start a team of their own, oversubscribing the cores with
      // threads that spin at each region's end while the ranks' barriers wait for each other.
      omp_set_num_threads(1);
      ThreadCommunicator comm(shared, r);
      try {
        body(comm);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace difftx::testing
