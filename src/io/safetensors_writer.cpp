// Writing safetensors files through the atomic writer.
#include <algorithm>
#include <bit>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/enum_names.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/float16.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "io/shape.h"

namespace difftx::io {

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

// Bytes per element of the dtypes difftx writes; 0 for any other.
uint64_t written_element_bytes(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "BF16" || dtype == "F16") return 2;
  if (dtype == "U8") return 1;
  return 0;
}

}  // namespace

const char* stored_float_name(StoredFloat type) {
  static constexpr EnumName<StoredFloat> names[] = {
      {StoredFloat::f32, "F32"}, {StoredFloat::bf16, "BF16"}, {StoredFloat::f16, "F16"}};
  return name_of(names, type);
}

void write_safetensors(const std::filesystem::path& path, std::span<const SafetensorsTensorSpec> specs,
                       const std::map<std::string, std::string>& metadata, const SafetensorsData& data) {
  const std::string where = "cannot write '" + path.string() + "'";
  std::vector<const SafetensorsTensorSpec*> sorted;
  for (const auto& t : specs) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });

  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<uint64_t> sizes;
  uint64_t offset = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const SafetensorsTensorSpec& t = *sorted[i];
    DIFFTX_CHECK(!t.name.empty() && t.name != "__metadata__", where, ": '", t.name,
                 "' is not a usable tensor name");
    DIFFTX_CHECK(i == 0 || sorted[i - 1]->name != t.name, where, ": tensor '", t.name, "' appears twice");
    const uint64_t element = written_element_bytes(t.dtype);
    DIFFTX_CHECK(element != 0, where, ": tensor '", t.name, "': dtype ", t.dtype, " is not one difftx writes");
    const auto elements = element_count(t.shape, std::numeric_limits<uint64_t>::max() / element);
    DIFFTX_CHECK(elements.has_value(), where, ": tensor '", t.name, "' has shape ", format_shape(t.shape),
                 ", which no file can hold");
    sizes.push_back(*elements * element);
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + sizes.back()}}};
    offset += sizes.back();
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
  for (size_t i = 0; i < sorted.size(); ++i) {
    const SafetensorsTensorSpec& spec = *sorted[i];
    const SafetensorsEntry t = data(spec);
    const Bytes bytes = bytes_of(t, where);
    DIFFTX_CHECK(t.name == spec.name && t.shape == spec.shape && bytes.dtype == spec.dtype && bytes.size == sizes[i],
                 where, ": tensor '", t.name, "' ", format_shape(t.shape), " ", bytes.dtype, " of ", bytes.size,
                 " bytes arrived where the header declares '", spec.name, "' ", format_shape(spec.shape), " ",
                 spec.dtype, " of ", sizes[i]);
    const auto* floats = std::get_if<std::span<const float>>(&t.data);
    if (floats && t.stored != StoredFloat::f32) write_narrowed(out, *floats, t.stored);
    else out.write(bytes.data, bytes.size);
  }
  out.commit();
}

void write_safetensors(const std::filesystem::path& path, std::span<const SafetensorsEntry> tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::string where = "cannot write '" + path.string() + "'";
  std::vector<SafetensorsTensorSpec> specs;
  std::map<std::string, const SafetensorsEntry*> by_name;
  for (const SafetensorsEntry& t : tensors) {
    DIFFTX_CHECK(!t.name.empty() && t.name != "__metadata__", where, ": '", t.name,
                 "' is not a usable tensor name");
    DIFFTX_CHECK(by_name.emplace(t.name, &t).second, where, ": tensor '", t.name, "' appears twice");
    const Bytes bytes = bytes_of(t, where);
    const auto elements = element_count(t.shape, std::numeric_limits<uint64_t>::max());
    DIFFTX_CHECK(elements == bytes.elements, where, ": tensor '", t.name, "' has shape ",
                 format_shape(t.shape), " but ", bytes.elements, " elements of data");
    specs.push_back({t.name, t.shape, bytes.dtype});
  }
  write_safetensors(path, specs, metadata, [&](const SafetensorsTensorSpec& spec) { return *by_name.at(spec.name); });
}

}  // namespace difftx::io
