// `difftx tokenize`: text on stdin -> token ids on stdout (or back with --decode).
#include <cstdio>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli/command.h"
#include "core/error.h"
#include "data/tokenizer_files.h"

namespace difftx::cli {
namespace {

int run_tokenize(Args& args) {
  const std::string name = args.require("tokenizer");
  const bool decode = args.flag("decode");
  const bool allow_special = args.flag("allow-special");
  const bool special_as_text = args.flag("special-as-text");
  const bool add_special_tokens = args.flag("add-special-tokens");
  args.finish();
  DIFFTX_CHECK(!(allow_special && special_as_text), "--allow-special and --special-as-text exclude each other");
  const data::Tokenizer tok = data::load_tokenizer(name);
  // tokenizer.json tokenizers match special-token text as transformers does by default.
  const bool specials = allow_special || (!tok.tiktoken_family() && !special_as_text);
  std::ios::sync_with_stdio(false);
  if (decode) {
    std::vector<int32_t> ids;
    std::string word;
    for (size_t position = 0; std::cin >> word; ++position) {
      const auto id = parse_integer(word);
      DIFFTX_CHECK(id && *id >= 0 && *id <= INT32_MAX, "stdin: '", word, "' at position ", position,
                   " is not a token id");
      ids.push_back(static_cast<int32_t>(*id));
    }
    const std::string text = tok.decode(ids);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  auto ids = tok.encode(text, specials ? data::Specials::allowed : data::Specials::as_text);
  if (add_special_tokens) ids = tok.add_template(ids);
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(ids[i]);
  }
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

DIFFTX_COMMAND("tokenize", "encode stdin to token ids, or decode ids back to text",
               "  --tokenizer NAME_OR_FILE  cl100k_base, r50k_base, p50k_base, p50k_edit, o200k_base,\n"
               "                            a .tiktoken file, a directory written by prepare, a Hugging\n"
               "                            Face tokenizer.json or a model directory holding one (or a\n"
               "                            slow tokenizer's vocab.json and merges.txt)\n"
               "  --decode                  read whitespace-separated ids, print the text\n"
               "  --allow-special           encode special-token strings (<|endoftext|>) as their\n"
               "                            ids; by default they are encoded as plain text, except\n"
               "                            with a tokenizer.json, which matches them as transformers\n"
               "  --special-as-text         encode special-token strings as plain text (tokenizer.json)\n"
               "  --add-special-tokens      add what the tokenizer's post-processor adds (Llama 3: BOS)\n"
               "Input must be UTF-8: invalid bytes are an error naming their offset.",
               run_tokenize);

}  // namespace difftx::cli
