// `difftx logits`: the float32 [T, V] logits of one full forward, as a NumPy .npy file.
#include <cstdio>
#include <sstream>

#include "cli/command.h"
#include "cli/device_option.h"
#include "core/error.h"
#include "io/npy.h"
#include "model/forward_logits.h"
#include "model/model_io.h"

namespace difftx::cli {
namespace {

std::vector<int32_t> parse_token_ids(const std::string& text, int64_t vocab_size) {
  std::istringstream in(text);
  std::vector<int32_t> ids;
  std::string word;
  while (in >> word) {
    const auto parsed = parse_integer(word);
    DIFFTX_CHECK(parsed.has_value(), "--tokens: '", word, "' (position ", ids.size(), ") is not an integer id");
    const int64_t id = *parsed;
    DIFFTX_CHECK(id >= 0 && id < vocab_size, "--tokens: id ", id, " at position ", ids.size(),
                 " is outside the vocabulary [0, ", vocab_size, ")");
    ids.push_back(static_cast<int32_t>(id));
  }
  DIFFTX_CHECK(!ids.empty(), "--tokens: no token ids given");
  return ids;
}

int run_logits(Args& args) {
  const std::string dir = args.require("model");
  const std::string tokens = args.require("tokens");
  const std::string out = args.require("out");
  backends::Backend& device = device_option(args);
  args.finish();
  model::Model model = model::load_model_dir(dir, model::MatrixPrecision::as_stored);
  model.move_to(device);
  const auto ids = parse_token_ids(tokens, model.config.vocab_size);
  const int64_t T = static_cast<int64_t>(ids.size());
  DIFFTX_CHECK(T <= model.config.max_position_embeddings, "--tokens: ", T, " tokens exceed max_position_embeddings ",
               model.config.max_position_embeddings);
  std::vector<float> logits(T * model.config.vocab_size);
  model::forward_logits(model, ids, logits.data());
  io::write_npy(out, {T, model.config.vocab_size}, logits);
  std::printf("wrote %s: float32 [%lld, %lld]\n", out.c_str(), (long long)T, (long long)model.config.vocab_size);
  return 0;
}

}  // namespace

DIFFTX_COMMAND("logits", "write the logits of a full forward pass as .npy",
               "  --model DIR           a model directory (config.json + model.safetensors)\n"
               DIFFTX_DEVICE_HELP
               "  --tokens \"ID ID ...\"  token ids, separated by spaces\n"
               "  --out FILE.npy        float32 [T, V] logits",
               run_logits);

}  // namespace difftx::cli
