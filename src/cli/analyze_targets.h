// The targets of `difftx analyze` (analyze.cpp dispatches; each lives in analyze_<target>.cpp),
// and what they share.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/args.h"

namespace difftx::cli {

int analyze_attention(Args& args);
int analyze_outliers(Args& args);
int analyze_quant(Args& args);

// "0,0.25,0.5": comma-separated numbers of option --`option`, with errors naming it.
std::vector<double> parse_number_list(const std::string& option, const std::string& text);
std::vector<int> parse_int_list(const std::string& option, const std::string& text);

// --json FILE: the object written atomically (when the option was given).
void write_analysis_json(const std::string& path, const nlohmann::json& value);

}  // namespace difftx::cli
