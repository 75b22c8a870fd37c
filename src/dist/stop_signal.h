// When one rank of an MPI job fails, mpirun ends the others with SIGTERM, and they would vanish
// without a word. This makes each say why on stderr before it dies of the signal as before.
#pragma once

namespace difftx::dist {

void explain_sigterm(int rank, int size);

}  // namespace difftx::dist
