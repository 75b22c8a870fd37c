// libFuzzer target: the grammar room on any bytes - as a JSON Schema (grammar/json_grammar.h), as
// GBNF text (grammar/gbnf.h) and as a `pattern` regex (grammar/regex.h). Only difftx::Error
// (GrammarError: a 400 for a server) may come out, never a crash, a hang or a stack overflow.
// Where a schema compiles, the automaton writes a few documents byte by byte (choices drawn from
// the input's hash) and each finished one must be JSON: the grammar promises it.
#include <cstdint>
#include <cstdlib>

#include "core/error.h"
#include "core/hash.h"
#include "fuzz_input.h"
#include "grammar/automaton.h"
#include "grammar/gbnf.h"
#include "grammar/json_grammar.h"
#include "grammar/regex.h"
#include "io/json_file.h"

namespace {

using difftx::grammar::Automaton;

// Walks the automaton with choices from `seed`, at most 512 bytes; a complete document must parse.
void write_documents(Automaton& a, uint64_t seed) {
  for (int doc = 0; doc < 4; ++doc) {
    std::string text;
    Automaton::State s = a.start();
    while (text.size() < 512) {
      seed = difftx::mix64(seed + 0x9E3779B97F4A7C15ull);
      if (a.complete(s) && (!a.extensible(s) || seed % 4 == 0)) {
        (void)difftx::io::parse_json_text(text, "fuzz document");  // throws (and so aborts below) if not JSON
        break;
      }
      std::vector<std::pair<uint8_t, Automaton::State>> next;
      for (int b = 0; b < 256; ++b)
        if (const auto t = a.next(s, static_cast<uint8_t>(b)); t >= 0) next.emplace_back(static_cast<uint8_t>(b), t);
      if (next.empty()) std::abort();  // a live state with nowhere to go: the grammar lied
      const auto& [byte, to] = next[(seed >> 8) % next.size()];
      text += static_cast<char>(byte);
      s = to;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = difftx::fuzz::as_text(data, size);
  try {
    const nlohmann::json schema = difftx::io::parse_json_text(text, "fuzz.json");
    Automaton a(difftx::grammar::json_schema_grammar(schema));
    try {
      write_documents(a, difftx::hash64(data, size));
    } catch (const difftx::grammar::GrammarError&) {  // an automaton limit: allowed
    } catch (const difftx::Error&) {
      std::abort();  // a document the grammar let through is not JSON
    }
  } catch (const difftx::Error&) {
  }
  try {
    (void)difftx::grammar::parse_gbnf(text);
  } catch (const difftx::Error&) {
  }
  try {
    difftx::grammar::GrammarBuilder b;
    const int32_t root = difftx::grammar::compile_regex(b, text, [&](const difftx::grammar::CodePointRanges& r) {
      return difftx::grammar::GrammarBuilder::ref(b.code_points("c", r));
    });
    (void)b.build(root);
  } catch (const difftx::Error&) {
  }
  return 0;
}
