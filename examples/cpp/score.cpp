// The log-likelihood of a text under a model, from C++ through difftx's C API (the header is C
// and C++ alike): tokenize, one forward, a log-softmax per position.
//
//   score MODEL_DIR TEXT
//
// prints the tokens, the mean negative log-likelihood per predicted token in nats and the
// perplexity. Build: c++ -std=c++17 score.cpp $(pkg-config --cflags --libs difftx)
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <difftx/difftx.h>

namespace {

using Model = std::unique_ptr<difftx_model, decltype(&difftx_model_free)>;

void check(bool ok) {
  if (!ok) throw std::runtime_error(difftx_last_error());
}

std::vector<int32_t> tokenize(difftx_model* model, const std::string& text) {
  std::vector<int32_t> ids(-difftx_tokenize(model, text.c_str(), 1, nullptr, 0));  // the size query
  check(difftx_tokenize(model, text.c_str(), 1, ids.data(), static_cast<int32_t>(ids.size())) >= 0);
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL_DIR TEXT\n", argv[0]);
    return 2;
  }
  try {
    Model model(difftx_model_load(argv[1], nullptr), difftx_model_free);
    check(model != nullptr);
    const std::vector<int32_t> ids = tokenize(model.get(), argv[2]);
    check(ids.size() >= 2);
    const int32_t n = static_cast<int32_t>(ids.size()), vocab = difftx_vocab_size(model.get());
    std::vector<float> logits(static_cast<size_t>(n) * vocab);
    check(difftx_logits(model.get(), ids.data(), n, logits.data()) == 0);
    double nll = 0;
    for (int32_t t = 0; t + 1 < n; ++t) {
      const float* row = logits.data() + static_cast<size_t>(t) * vocab;
      double top = row[0], sum = 0;
      for (int32_t v = 1; v < vocab; ++v) top = std::max(top, static_cast<double>(row[v]));
      for (int32_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - top);
      nll += top + std::log(sum) - row[ids[t + 1]];
    }
    nll /= n - 1;
    std::printf("%d tokens, %.4f nats per token, perplexity %.2f\n", n, nll, std::exp(nll));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "score: %s\n", e.what());
    return 1;
  }
  return 0;
}
