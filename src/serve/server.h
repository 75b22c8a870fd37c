// `difftx serve`: the HTTP server. It listens first and loads the model in the background
// (/health answers 503 until it is ready), then serves until SIGINT or SIGTERM: new requests get
// 503, in-flight ones have the grace period to finish, the rest are cancelled, and it returns 0.
#pragma once
#include <functional>
#include <memory>

#include "serve/server_state.h"

namespace difftx::serve {

using ModelLoader = std::function<std::unique_ptr<ServedModel>()>;

// Returns the exit status: 0 after a signal, 1 when the model failed to load or the port could
// not be bound.
int run_server(const ServerOptions& options, const ModelLoader& load);

}  // namespace difftx::serve
