#include "data/tasks/mixture_spec.h"

#include <string>

#include "core/error.h"

namespace difftx::retrieval {
namespace {

double parse_fraction(const std::string& option, std::string_view part, std::string_view value) {
  const std::string text(value);
  size_t used = 0;
  double f = -1;
  try {
    f = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  DIFFTX_CHECK(used == text.size() && !text.empty() && f >= 0 && f <= 1, option, ": '", part,
               "': the fraction must be a number in [0, 1]");
  return f;
}

}  // namespace

MixtureSpec parse_mixture(std::string_view text, OptionSpelling spelling) {
  const std::string option = option_name("mix", spelling);
  MixtureSpec spec;
  bool seen_niah = false, seen_mqar = false;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = part.find('=');
    DIFFTX_CHECK(eq != std::string_view::npos, option, ": '", part, "' is not TASK=FRACTION (e.g. niah=0.2,mqar=0.1)");
    const std::string_view name = part.substr(0, eq);
    const double f = parse_fraction(option, part, part.substr(eq + 1));
    if (name == "niah") {
      DIFFTX_CHECK(!seen_niah, option, ": niah is given twice");
      seen_niah = true;
      spec.niah = f;
    } else if (name == "mqar") {
      DIFFTX_CHECK(!seen_mqar, option, ": mqar is given twice");
      seen_mqar = true;
      spec.mqar = f;
    } else {
      fail(option, ": unknown task '", name, "' (the tasks are niah and mqar)");
    }
  }
  DIFFTX_CHECK(spec.niah + spec.mqar <= 1, option, ": the fractions sum to ", spec.niah + spec.mqar, ", more than 1");
  return spec;
}

nlohmann::json mixture_to_json(const MixtureSpec& spec) {
  nlohmann::json j = nlohmann::json::object();
  if (spec.niah > 0) j["niah"] = spec.niah;
  if (spec.mqar > 0) j["mqar"] = spec.mqar;
  return j;
}

}  // namespace difftx::retrieval
