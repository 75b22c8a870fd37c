#include "core/option_name.h"

#include <algorithm>

namespace difftx {

std::string option_name(std::string_view field, OptionSpelling spelling) {
  if (spelling == OptionSpelling::field) return std::string(field);
  std::string flag = "--" + std::string(field);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

}  // namespace difftx
