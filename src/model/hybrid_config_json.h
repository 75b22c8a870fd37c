// difftx config.json's `hybrid` object (docs/FORMATS.md "Model directories"): a HybridConfig
// (config.h) as difftx's own format holds it, one kind name per layer and the sizes by their
// field names. Every field is required and an unknown one is an error naming it; the stack's
// consistency is ModelConfig::validate's.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/config.h"

namespace difftx::model {

nlohmann::json hybrid_to_json(const HybridConfig& h);
// `where` names the file in errors ("FILE: key 'hybrid': ...").
HybridConfig hybrid_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace difftx::model
