// Writing safetensors files through the atomic writer.
#include <algorithm>
#include <bit>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/float16.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "io/shape.h"

namespace difftx {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swaps");

namespace {

struct Bytes {
  const void* data;
  uint64_t elements;
  uint64_t size;
  const char* dtype;
};

Bytes bytes_of(const SafetensorsEntry& t, const std::string& where) {
  if (const auto* stored = std::get_if<StoredBytes>(&t.data)) {
    const uint64_t element = stored->dtype == "U8" ? 1 : 2;
    DIFFTX_CHECK(stored->dtype == "U8" || stored->dtype == "BF16" || stored->dtype == "F16", where, ": tensor '",
                 t.name, "': stored bytes of dtype ", stored->dtype, " (expected U8, BF16 or F16)");
    DIFFTX_CHECK(stored->bytes.size() % element == 0, where, ": tensor '", t.name, "': ", stored->bytes.size(),
                 " bytes are not whole ", stored->dtype, " elements");
    return Bytes{stored->bytes.data(), stored->bytes.size() / element, stored->bytes.size(), stored->dtype.c_str()};
  }
  if (const auto* ints = std::get_if<std::span<const int32_t>>(&t.data))
    return Bytes{ints->data(), ints->size(), ints->size_bytes(), "I32"};
  const auto& floats = std::get<std::span<const float>>(t.data);
  if (t.stored == StoredFloat::f32) return Bytes{floats.data(), floats.size(), floats.size_bytes(), "F32"};
  return Bytes{floats.data(), floats.size(), floats.size() * sizeof(uint16_t), stored_float_name(t.stored)};
}

// Float data rounded to 16 bits, a bounded chunk at a time.
void write_narrowed(AtomicFileWriter& out, std::span<const float> data, StoredFloat type) {
  std::vector<uint16_t> chunk(std::min<size_t>(data.size(), 1 << 16));
  for (size_t begin = 0; begin < data.size(); begin += chunk.size()) {
    const size_t n = std::min(chunk.size(), data.size() - begin);
    for (size_t i = 0; i < n; ++i)
      chunk[i] = type == StoredFloat::bf16 ? float_to_bf16(data[begin + i]) : float_to_f16(data[begin + i]);
    out.write(chunk.data(), n * sizeof(uint16_t));
  }
}

}  // namespace

const char* stored_float_name(StoredFloat type) {
  switch (type) {
    case StoredFloat::f32: return "F32";
    case StoredFloat::bf16: return "BF16";
    case StoredFloat::f16: return "F16";
  }
  return "F32";
}

void write_safetensors(const std::filesystem::path& path, std::span<const SafetensorsEntry> tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::string where = "cannot write '" + path.string() + "'";
  std::vector<const SafetensorsEntry*> sorted;
  for (const auto& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });

  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const SafetensorsEntry& t = *sorted[i];
    DIFFTX_CHECK(!t.name.empty() && t.name != "__metadata__", where, ": '", t.name,
                 "' is not a usable tensor name");
    DIFFTX_CHECK(i == 0 || sorted[i - 1]->name != t.name, where, ": tensor '", t.name, "' appears twice");
    const Bytes bytes = bytes_of(t, where);
    const auto elements = element_count(t.shape, std::numeric_limits<uint64_t>::max());
    DIFFTX_CHECK(elements == bytes.elements, where, ": tensor '", t.name, "' has shape ",
                 format_shape(t.shape), " but ", bytes.elements, " elements of data");
    header[t.name] = {{"dtype", bytes.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes.size}}};
    offset += bytes.size;
  }

  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::type_error& e) {  // a name or metadata string that is not UTF-8
    fail(where, ": ", json_error_text(e));
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  DIFFTX_CHECK(text.size() <= kSafetensorsMaxHeaderBytes, where, ": the header would take ", text.size(),
               " bytes, more than readers accept (", kSafetensorsMaxHeaderBytes, ")");

  AtomicFileWriter out(path);
  const uint64_t length = text.size();  // little-endian u64, as the host stores it
  out.write(&length, sizeof length);
  out.write(text);
  for (const SafetensorsEntry* t : sorted) {
    const auto* floats = std::get_if<std::span<const float>>(&t->data);
    if (floats && t->stored != StoredFloat::f32) {
      write_narrowed(out, *floats, t->stored);
    } else {
      const Bytes bytes = bytes_of(*t, where);
      out.write(bytes.data, bytes.size);
    }
  }
  out.commit();
}

}  // namespace difftx
