#include "api/training.h"

#include <filesystem>

#include "core/error.h"
#include "dist/local_communicator.h"

namespace difftx::api {

train::TrainSummary train_in_process(train::TrainOptions o) {
  DIFFTX_CHECK(!o.config_path.empty() || !o.init_dir.empty(),
               "train: give a config (or init, a model directory whose config.json is used)");
  if (o.config_path.empty()) o.config_path = (std::filesystem::path(o.init_dir) / "config.json").string();
  dist::LocalCommunicator comm;
  return train::train(o, comm);
}

}  // namespace difftx::api
