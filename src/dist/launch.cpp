#include "dist/launch.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "dist/local_communicator.h"

namespace difftx::dist {
namespace fs = std::filesystem;

namespace {

fs::path plugin_path() {
  if (const char* path = std::getenv("DIFFTX_MPI_PLUGIN"); path && *path) return path;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return (ec ? fs::path(".") : exe.parent_path()) / "libdifftx_mpi.so";
}

std::unique_ptr<Communicator> open_mpi_plugin(const std::string& why) {
  const fs::path path = plugin_path();
  // RTLD_GLOBAL: Open MPI loads components of its own that resolve symbols of libmpi.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  DIFFTX_CHECK(handle, why, ", but its MPI plugin cannot be loaded: ", dlerror(),
               " (build difftx with Open MPI installed: Debian's libopenmpi-dev; or set DIFFTX_MPI_PLUGIN)");
  using Create = Communicator* (*)(int, char*, size_t);
  auto create = reinterpret_cast<Create>(dlsym(handle, "difftx_mpi_communicator"));
  DIFFTX_CHECK(create, path.string(), ": not a difftx MPI plugin (no difftx_mpi_communicator)");
  char error[1024] = "";
  Communicator* comm = create(kCommunicatorInterfaceVersion, error, sizeof error);
  DIFFTX_CHECK(comm, path.string(), ": ", error);
  return std::unique_ptr<Communicator>(comm);
}

}  // namespace

Launch launch_from_name(const std::string& name) {
  if (name == "auto") return Launch::automatic;
  if (name == "local") return Launch::local;
  if (name == "mpi") return Launch::mpi;
  fail("unknown launch '", name, "' (expected auto, local or mpi)");
}

std::string mpi_launcher_variable() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name)) return name;
  return "";
}

std::unique_ptr<Communicator> open_communicator(Launch launch) {
  const std::string variable = mpi_launcher_variable();
  if (launch == Launch::mpi) {
    auto comm = open_mpi_plugin("--dist mpi was given");
    // A lone MPI process is a one-rank run the user did not mean: say how to start ranks.
    DIFFTX_CHECK(!variable.empty(), "--dist mpi was given but difftx was not started by mpirun (none of "
                 "OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK is set): run mpirun -np N difftx ..., or use --dist local");
    return comm;
  }
  if (launch == Launch::automatic && !variable.empty())
    return open_mpi_plugin("difftx was started by an MPI launcher (" + variable + " is set)");
  return std::make_unique<LocalCommunicator>();
}

}  // namespace difftx::dist
