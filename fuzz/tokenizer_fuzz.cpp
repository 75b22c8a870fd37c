// libFuzzer target: the tokenizer readers. An input holding a NUL byte is a tiktoken rank file
// (before the NUL) and its JSON sidecar (after it); one without is a Hugging Face
// tokenizer.json. A tokenizer that loads must encode text into ids inside its vocabulary, and a
// tiktoken one (byte-level: every byte is a token) must decode them back to the text. Only
// difftx::Error may come out; see safetensors_fuzz.cpp.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"
#include "fuzz_input.h"

namespace {

void check(const difftx::data::Tokenizer& tokenizer, bool round_trips) {
  const std::string text = "Hello, world! 123 \xC3\xA9t\xC3\xA9\n  <|endoftext|>";
  const std::vector<int32_t> ids = tokenizer.encode(text);
  for (const int32_t id : ids)
    if (id < 0 || id >= tokenizer.vocab_size()) std::abort();  // an id outside the vocabulary
  if (round_trips && tokenizer.decode(ids) != text) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = difftx::fuzz::as_text(data, size);
  const size_t nul = input.find('\0');
  try {
    if (nul == std::string_view::npos) {
      check(difftx::data::read_hf_tokenizer(difftx::fuzz::write_input("tokenizer.json", input)), false);
    } else {
      difftx::fuzz::write_input(difftx::data::kTokenizerRanksFile, input.substr(0, nul));
      difftx::fuzz::write_input(difftx::data::kTokenizerSidecarFile, input.substr(nul + 1));
      check(difftx::data::load_tokenizer(difftx::fuzz::scratch_dir().string()), true);
    }
  } catch (const difftx::Error&) {
  }
  return 0;
}
