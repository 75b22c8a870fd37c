// What `difftx train --mix` asks for: the fraction of training rows given to each retrieval
// task (task_mixture.h says how the rows are chosen and filled).
#pragma once
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/option_name.h"

namespace difftx::retrieval {

struct MixtureSpec {
  double niah = 0;  // fraction of rows
  double mqar = 0;
  bool empty() const { return niah == 0 && mqar == 0; }
};

// "niah=0.2,mqar=0.1" (either part may be left out; "" is no mixture). Errors name the part: an
// unknown task, a repeated one, a fraction outside [0, 1], fractions summing past 1; they name the
// option as `spelling` writes it ("mix" or "--mix").
MixtureSpec parse_mixture(std::string_view text, OptionSpelling spelling);
nlohmann::json mixture_to_json(const MixtureSpec& spec);  // {"niah": F, "mqar": G}, {} when empty

}  // namespace difftx::retrieval
