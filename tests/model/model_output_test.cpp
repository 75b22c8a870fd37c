// convert_model's interrupt (Ctrl-C in the Python module): called before every tensor is read;
// what it throws ends the conversion, in every format, leaving no weights file (nor its
// temporary) and no --out directory that the conversion made; an empty one given stays empty.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "data/bpe_trainer.h"
#include "data/tokenizer_files.h"
#include "io/io_test_files.h"
#include "model/formats/difftx_format.h"
#include "model/model_output.h"
#include "support/random_model.h"

namespace difftx::model {
namespace {

namespace fs = std::filesystem;

TEST(ConvertModel, AnInterruptLeavesNoWeightsAndNoOutDirectoryItMade) {
  testing::TempDir dir;
  const fs::path in = dir / "in";
  const ModelConfig c = testing::small_config(kernels::AttentionKind::baseline, {.vocab_size = 300});
  save_difftx_model(testing::random_model(c, 1), in, io::StoredFloat::f32);
  const std::vector<std::string_view> docs(40, "the whale and the sea, the ship and the deck");
  data::save_tokenizer(data::train_bpe(docs, {.vocab_size = 300}), in);  // GGUF carries the vocabulary
  struct Stop {};
  for (const std::string format : {"difftx", "hf", "gguf"}) {
    SCOPED_TRACE(format);
    const auto convert = [&](const fs::path& out, const Interrupt& interrupt) {
      convert_model(in, model_output(out, format, "f32", std::nullopt, OptionSpelling::field), interrupt);
    };
    int tensors = 0;
    convert(dir / ("whole_" + format), [&] { ++tensors; });
    EXPECT_GT(tensors, 1);
    int calls = 0;
    const auto stop_at_last = [&] {
      if (++calls == tensors) throw Stop{};
    };
    const fs::path out = dir / format;
    EXPECT_THROW(convert(out, stop_at_last), Stop);
    EXPECT_FALSE(fs::exists(out));
    fs::create_directory(out);
    calls = 0;
    EXPECT_THROW(convert(out, stop_at_last), Stop);
    EXPECT_TRUE(fs::is_empty(out));
  }
}

}  // namespace
}  // namespace difftx::model
