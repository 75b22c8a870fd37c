// How an error names an option: as the caller gave it. The library's options structs, the C
// API's struct fields, Python's keywords and the server's JSON fields spell a name in snake_case
// ("top_k"); the CLI takes it as a flag ("--top-k"). A check that both reach takes the spelling,
// so that one routine holds the rule and each caller reads the name it wrote.
#pragma once
#include <string>
#include <string_view>

namespace difftx {

enum class OptionSpelling { field, flag };

// `field` ("max_batch_tokens") as `spelling` writes it: "max_batch_tokens" or "--max-batch-tokens".
std::string option_name(std::string_view field, OptionSpelling spelling);

}  // namespace difftx
