// The MPI communicator. Built as the plugin libdifftx_mpi.so, the only code linked against
// libmpi; launch.cpp loads it when difftx runs under mpirun, so the difftx binary itself
// needs no MPI at run time.
#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.h"
#include "dist/communicator.h"

namespace difftx::dist {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  fail("MPI_", what, " failed: ", std::string(text, static_cast<size_t>(length)));
}

// MPI counts are ints; callers cut large arrays into buckets (train/data_parallel.h).
int count_of(int64_t n, const char* what) {
  DIFFTX_CHECK(n >= 0 && n <= INT_MAX, "MPI_", what, ": ", n, " elements exceed MPI's int count");
  return static_cast<int>(n);
}

MPI_Datatype mpi_type(DType type) {
  switch (type) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::u64: return MPI_UINT64_T;
  }
  fail("MPI: unknown element type");
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    int provided = 0;
    // FUNNELED: only the main thread calls MPI (OpenMP threads and the watchdog never do).
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "Init_thread");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "Comm_dup");
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "Comm_set_errhandler");
    check(MPI_Comm_rank(comm_, &rank_), "Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "Comm_size");
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    library_.assign(version, static_cast<size_t>(length));
    library_ = library_.substr(0, library_.find_first_of(",\n"));
  }
  ~MpiCommunicator() override {
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string description() const override {
    return "mpi (" + library_ + ", " + std::to_string(size_) + " ranks)";
  }

  void all_reduce(void* data, int64_t n, DType type) override {
    check(MPI_Allreduce(MPI_IN_PLACE, data, count_of(n, "Allreduce"), mpi_type(type), MPI_SUM, comm_), "Allreduce");
  }
  void reduce_scatter_sum(const float* send, float* recv, int64_t shard) override {
    count_of(shard * size_, "Reduce_scatter_block");
    check(MPI_Reduce_scatter_block(send, recv, count_of(shard, "Reduce_scatter_block"), MPI_FLOAT, MPI_SUM, comm_),
          "Reduce_scatter_block");
  }
  void all_gather_bytes(void* data, int64_t bytes) override {
    count_of(bytes * size_, "Allgather");
    check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, count_of(bytes, "Allgather"), MPI_BYTE, comm_),
          "Allgather");
  }
  void broadcast(void* data, int64_t bytes, int root) override {
    check(MPI_Bcast(data, count_of(bytes, "Bcast"), MPI_BYTE, root, comm_), "Bcast");
  }
  void stop_all_ranks(int code) override { MPI_Abort(comm_, code); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::string library_;
};

}  // namespace
}  // namespace difftx::dist

// The plugin's one entry point (launch.cpp): a new communicator, or null with the reason in
// `error` (an interface version that differs from the binary's, or MPI failing to start).
extern "C" difftx::dist::Communicator* difftx_mpi_communicator(int interface_version, char* error,
                                                               size_t error_size) {
  try {
    DIFFTX_CHECK(interface_version == difftx::dist::kCommunicatorInterfaceVersion,
                 "the plugin implements communicator interface version ",
                 difftx::dist::kCommunicatorInterfaceVersion, " but difftx expects ", interface_version,
                 " (plugin and binary come from different builds)");
    return new difftx::dist::MpiCommunicator();
  } catch (const std::exception& e) {
    std::snprintf(error, error_size, "%s", e.what());
    return nullptr;
  }
}
