// The communicator layer without MPI: strings through the collectives, the startup check that
// names the ranks and keys that differ, the local communicator, choosing a communicator from
// the launcher's environment (with clear errors when the MPI plugin cannot be loaded), and the
// watchdog that ends a rank stuck in a collective.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "dist/consistency.h"
#include "dist/launch.h"
#include "dist/local_communicator.h"
#include "dist/text_collectives.h"
#include "dist/watchdog.h"
#include "support/testing.h"
#include "support/thread_ranks.h"

namespace difftx::dist {
namespace {

using testing::error_of;
using testing::run_ranks;

TEST(TextCollectives, BroadcastAndGatherStrings) {
  std::mutex mutex;
  run_ranks(3, [&](Communicator& comm) {
    const std::string got = broadcast_text(comm, comm.rank() == 1 ? "from rank one" : "ignored", 1);
    const auto all = all_gather_text(comm, std::string(comm.rank() * 4, 'a' + comm.rank()), 6);
    std::lock_guard lock(mutex);
    EXPECT_EQ(got, "from rank one");
    EXPECT_EQ(all, (std::vector<std::string>{"", "bbbb", "cccccc"}));  // rank 2's 8 bytes cut to 6
  });
}

TEST(Consistency, SameInputsPassAndDifferencesNameRankAndKey) {
  const nlohmann::json facts = {{"options", {{"seed", 1}, {"lr", 0.001}}}, {"data", {{"metadata.json", "aa"}}}};
  run_ranks(3, [&](Communicator& comm) { require_same_inputs(comm, facts); });

  std::mutex mutex;
  std::vector<std::string> messages;
  run_ranks(3, [&](Communicator& comm) {
    nlohmann::json mine = facts;
    if (comm.rank() == 1) mine["data"]["metadata.json"] = "bb";
    if (comm.rank() == 2) {
      mine["options"]["seed"] = 2;
      mine["options"].erase("lr");
    }
    const std::string msg = error_of([&] { require_same_inputs(comm, mine); });
    std::lock_guard lock(mutex);
    messages.push_back(msg);
  });
  for (const std::string& msg : messages)
    EXPECT_EQ(msg,
              "the ranks were not given the same inputs (every rank must run the same command on the same data):\n"
              "  rank 1: '/data/metadata.json' is \"bb\" here but \"aa\" on rank 0\n"
              "  rank 2: '/options/lr' is absent here but 0.001 on rank 0; '/options/seed' is 2 here but 1 on rank 0");
}

TEST(LocalCommunicator, IsRankZeroOfOne) {
  LocalCommunicator comm;
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  double x[2] = {1.5, 2.5};
  comm.all_reduce_sum(x, 2);
  EXPECT_EQ(x[1], 2.5);
  const float send[3] = {1, 2, 3};
  float recv[3] = {};
  comm.reduce_scatter_sum(send, recv, 3);
  EXPECT_EQ(recv[2], 3.0f);
  require_same_inputs(comm, {{"anything", 1}});
}

// Sets environment variables for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Launch, LocalUnlessAnMpiLauncherStartedUs) {
  ScopedEnv a("OMPI_COMM_WORLD_SIZE", nullptr), b("PMIX_RANK", nullptr), c("PMI_RANK", nullptr);
  EXPECT_EQ(mpi_launcher_variable(), "");
  EXPECT_EQ(open_communicator(Launch::automatic)->description(), "local");
  EXPECT_EQ(open_communicator(Launch::local)->size(), 1);
  EXPECT_EQ(launch_from_name("mpi"), Launch::mpi);
  EXPECT_EQ(error_of([] { launch_from_name("nccl"); }), "unknown launch 'nccl' (expected auto, local or mpi)");
}

TEST(Launch, AMissingOrForeignPluginIsAClearError) {
  ScopedEnv size("OMPI_COMM_WORLD_SIZE", "2");
  {
    ScopedEnv plugin("DIFFTX_MPI_PLUGIN", "/nonexistent/libdifftx_mpi.so");
    EXPECT_EQ(mpi_launcher_variable(), "OMPI_COMM_WORLD_SIZE");
    const std::string msg = error_of([] { open_communicator(Launch::automatic); });
    EXPECT_NE(msg.find("difftx was started by an MPI launcher (OMPI_COMM_WORLD_SIZE is set), but its MPI plugin "
                       "cannot be loaded: /nonexistent/libdifftx_mpi.so: cannot open shared object file"),
              std::string::npos) << msg;
    EXPECT_NE(msg.find("libopenmpi-dev"), std::string::npos) << msg;
    // Asked for explicitly, local needs no plugin.
    EXPECT_EQ(open_communicator(Launch::local)->description(), "local");
  }
  ScopedEnv plugin("DIFFTX_MPI_PLUGIN", "libm.so.6");
  EXPECT_EQ(error_of([] { open_communicator(Launch::mpi); }),
            "libm.so.6: not a difftx MPI plugin (no difftx_mpi_communicator)");
}

// Collectives that return at once, or never (a rank that waits for a dead peer).
class FakeCommunicator final : public Communicator {
 public:
  explicit FakeCommunicator(bool hang) : hang_(hang) {}
  int rank() const override { return 1; }
  int size() const override { return 2; }
  std::string description() const override { return "fake"; }
  void all_reduce(void*, int64_t, DType) override {
    while (hang_) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  void reduce_scatter_sum(const float*, float*, int64_t) override {}
  void all_gather_bytes(void*, int64_t) override {}
  void broadcast(void*, int64_t, int) override {}
  void stop_all_ranks(int) override {}

 private:
  bool hang_;
};

TEST(Watchdog, QuickCollectivesAndIdleTimeDoNotTrigger) {
  WatchdogCommunicator comm(std::make_unique<FakeCommunicator>(false), 0.05);
  double x = 1;
  for (int i = 0; i < 20; ++i) comm.all_reduce_sum(&x, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // idle, longer than the timeout
  comm.all_reduce_sum(&x, 1);
  EXPECT_EQ(comm.description(), "fake");
}

TEST(WatchdogDeathTest, EndsARankStuckInACollective) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        WatchdogCommunicator comm(std::make_unique<FakeCommunicator>(true), 0.2);
        double x = 1;
        comm.all_reduce_sum(&x, 1);
      },
      ::testing::ExitedWithCode(1),
      "rank 1 of 2: all-reduce has waited 0.2 s for the other ranks; a rank died or hangs");
}

}  // namespace
}  // namespace difftx::dist
