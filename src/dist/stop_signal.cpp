#include "dist/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace difftx::dist {
namespace {

char message[256];

void on_sigterm(int signal) {
  // Only async-signal-safe calls here; the handler was reset, so raise() ends the process.
  const ssize_t ignored = write(STDERR_FILENO, message, std::strlen(message));
  (void)ignored;
  raise(signal);
}

}  // namespace

void explain_sigterm(int rank, int size) {
  std::snprintf(message, sizeof message,
                "difftx: rank %d of %d stopped by SIGTERM (mpirun stops every rank when one fails or the job is "
                "interrupted; the last checkpoint is intact: continue with --resume)\n",
                rank, size);
  struct sigaction action {};
  action.sa_handler = on_sigterm;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace difftx::dist
