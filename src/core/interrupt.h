// How an embedding program stops a long computation (the Python module: Ctrl-C): a callback that
// the computation calls at its natural points (after every task, batch, document block, tensor,
// ...); it may be empty. What it throws ends the computation and comes out of the call.
#pragma once
#include <functional>

namespace difftx {

using Interrupt = std::function<void()>;

}  // namespace difftx
