// libFuzzer target: every JSON input's parser (parse_json_text: depth bound, repeated keys,
// NUL bytes), the bounded rendering of values in messages, and the model config reader on
// what parses. Only difftx::Error may come out; see safetensors_fuzz.cpp.
#include <cstdint>

#include "core/error.h"
#include "fuzz_input.h"
#include "io/json_file.h"
#include "model/model_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const nlohmann::json value = difftx::io::parse_json_text(difftx::fuzz::as_text(data, size), "fuzz.json");
    (void)difftx::io::json_value_for_message(value);
    (void)value.dump();
    difftx::model::model_config_from_json(value, "fuzz.json").validate();
  } catch (const difftx::Error&) {
  }
  return 0;
}
