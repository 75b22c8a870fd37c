// libFuzzer target: the safetensors reader (header length, header JSON, dtypes, shapes, offsets,
// coverage, data) on any bytes. Every input must end in a difftx::Error or in a file whose
// tensors read; any other exception escapes to libFuzzer, which reports it as a crash, and
// ASan/UBSan report memory faults and undefined behaviour. Run with scripts/fuzz.
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fuzz_input.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = difftx::fuzz::write_input("model.safetensors", difftx::fuzz::as_text(data, size));
  try {
    const difftx::io::SafetensorsReader reader(path);
    for (const std::string& name : reader.names()) {
      const std::vector<int64_t> shape = reader.info(name).shape;
      try {
        reader.read_f32(name, shape);
      } catch (const difftx::Error&) {  // an integer tensor
      }
      try {
        reader.read_i32(name, shape);
      } catch (const difftx::Error&) {  // a float tensor, or an I64 beyond int32
      }
    }
    (void)reader.metadata();
  } catch (const difftx::Error&) {
  }
  return 0;
}
