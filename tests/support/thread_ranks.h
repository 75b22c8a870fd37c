// Ranks as threads of one process, with a Communicator over shared memory: collective code
// (data parallelism, startup checks) tested without MPI. Reductions add the ranks' values in
// rank order, so every rank gets bit-identical sums.
#pragma once
#include <functional>

#include "dist/communicator.h"

namespace difftx::testing {

// Runs body(comm) on `ranks` threads, one rank each (with one OpenMP thread), and waits for
// all. An exception on any rank is rethrown here (the first one by rank) once every thread has
// ended; a body that throws on some ranks only must not leave the others waiting in a
// collective.
void run_ranks(int ranks, const std::function<void(dist::Communicator&)>& body);

}  // namespace difftx::testing
