// Which communicator a process uses. A process started by mpirun (or another MPI launcher)
// loads the MPI plugin, libdifftx_mpi.so, found beside the difftx binary or at
// $DIFFTX_MPI_PLUGIN; any other process is a single local rank and never touches MPI, so a
// single-process run needs no MPI installed.
#pragma once
#include <memory>
#include <string>

#include "dist/communicator.h"

namespace difftx::dist {

enum class Launch { automatic, local, mpi };
Launch launch_from_name(const std::string& name);  // "auto" | "local" | "mpi"

// The name of the launcher variable that marks this process as an MPI rank
// (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK), or empty.
std::string mpi_launcher_variable();

// automatic: MPI when mpi_launcher_variable() is set, else local. Errors: the plugin cannot be
// loaded (named, with the loader's reason) or MPI does not start.
std::unique_ptr<Communicator> open_communicator(Launch launch);

}  // namespace difftx::dist
