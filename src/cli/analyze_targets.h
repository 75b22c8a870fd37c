// The targets of `difftx analyze` (analyze.cpp dispatches; each lives in analyze_<target>.cpp),
// and what they share.
#pragma once
#include <string>
#include <vector>

#include "cli/args.h"
#include "results/results.h"

namespace difftx::cli {

int analyze_niah(Args& args);  // analyze_retrieval.cpp
int analyze_mqar(Args& args);  // analyze_retrieval.cpp
int analyze_attention(Args& args);
int analyze_outliers(Args& args);
int analyze_quant(Args& args);

// --NAME B,B,...: attention logit bit widths, each 0 (none) or 2 to 16 (check_logit_bits), checked
// before anything is loaded or trained; errors name the option.
std::vector<int> logit_bits_option(Args& args, const std::string& name, const std::string& fallback);

// --json FILE: the analyses written atomically as results-schema objects (when the option was given).
void write_analysis_json(const std::string& path, const results::Analyses& analyses);

}  // namespace difftx::cli
