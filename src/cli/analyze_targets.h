// The analyses behind `difftx analyze TARGET`, each in a file of its own (analyze_*.cpp).
#pragma once
#include "cli/args.h"

namespace difftx::cli {

int analyze_niah(Args& args);  // analyze_retrieval.cpp
int analyze_mqar(Args& args);  // analyze_retrieval.cpp

}  // namespace difftx::cli
