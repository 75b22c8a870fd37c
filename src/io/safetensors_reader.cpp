// Reading safetensors files: header validation at open, then bounded positioned reads.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/float16.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "io/shape.h"

namespace difftx::io {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swaps");

namespace {

using nlohmann::json;

// Bytes per read when converting, so that a BF16 tensor never needs a second full-size buffer.
constexpr uint64_t kChunkBytes = uint64_t{1} << 22;

struct DtypeSize {
  std::string_view name;
  uint32_t bits;
};
// Every dtype of the format (huggingface/safetensors Dtype), with its size in bits.
constexpr DtypeSize kDtypes[] = {
    {"BOOL", 8},  {"U8", 8},       {"I8", 8},       {"F8_E5M2", 8}, {"F8_E4M3", 8},
    {"F8_E8M0", 8}, {"I16", 16},   {"U16", 16},     {"F16", 16},    {"BF16", 16},
    {"I32", 32},  {"U32", 32},     {"F32", 32},     {"F64", 64},    {"I64", 64},
    {"U64", 64},  {"C64", 64},     {"F4", 4},       {"F6_E2M3", 6}, {"F6_E3M2", 6},
};

std::string known_dtypes() {
  std::string out;
  for (const auto& d : kDtypes) out.append(out.empty() ? "" : " ").append(d.name);
  return out;
}

// A short description of a JSON value for messages: scalars verbatim (cut at 40 characters),
// containers by type only.
std::string describe(const json& v) {
  if (v.is_structured()) return std::string("a JSON ") + v.type_name();
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

std::optional<uint64_t> as_unsigned(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  return std::nullopt;
}

struct Header {
  std::map<std::string, SafetensorsTensorInfo> tensors;
  std::map<std::string, std::string> metadata;
};

// Parses the JSON text (parse_json_text rejects repeated keys) and containers nested deeper
// than the format allows (a header is at most {name: {key: [number, ...]}}), as soon as the
// parser reaches them.
json parse_header_json(std::string_view text, const std::string& file) {
  const auto watch = [&](int depth, json::parse_event_t event, json&) {
    DIFFTX_CHECK(depth < 3 || (event != json::parse_event_t::object_start && event != json::parse_event_t::array_start),
                 file, ": header nests arrays or objects deeper than the format allows");
    return true;
  };
  const json root = parse_json_text(text, file + ": header", watch);
  DIFFTX_CHECK(root.is_object(), file, ": header is ", describe(root), ", expected a JSON object");
  return root;
}

std::map<std::string, std::string> parse_metadata(const json& value, const std::string& file) {
  DIFFTX_CHECK(value.is_object(), file, ": \"__metadata__\" is ", describe(value),
               ", expected an object of strings");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, v] : value.items()) {
    DIFFTX_CHECK(v.is_string(), file, ": \"__metadata__\" key '", key, "' is ", describe(v),
                 ", expected a string");
    metadata[key] = v.get<std::string>();
  }
  return metadata;
}

SafetensorsTensorInfo parse_entry(const std::string& name, const json& entry, uint64_t data_size,
                                  const std::string& file) {
  const std::string where = file + ": tensor '" + name + "'";
  DIFFTX_CHECK(entry.is_object(), where, ": entry is ", describe(entry),
               ", expected an object with dtype, shape and data_offsets");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    DIFFTX_CHECK(entry.contains(key), where, ": entry has no \"", key, "\"");

  SafetensorsTensorInfo info;
  const json& dtype = entry["dtype"];
  DIFFTX_CHECK(dtype.is_string(), where, ": dtype is ", describe(dtype), ", expected a string");
  info.dtype = dtype.get<std::string>();
  const auto known = std::find_if(std::begin(kDtypes), std::end(kDtypes),
                                  [&](const DtypeSize& d) { return d.name == info.dtype; });
  DIFFTX_CHECK(known != std::end(kDtypes), where, ": unknown dtype ", describe(dtype),
               " (known: ", known_dtypes(), ")");

  const json& shape = entry["shape"];
  DIFFTX_CHECK(shape.is_array(), where, ": shape is ", describe(shape), ", expected an array of integers");
  for (size_t i = 0; i < shape.size(); ++i) {
    const auto dim = as_unsigned(shape[i]);
    DIFFTX_CHECK(dim && *dim <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), where,
                 ": shape[", i, "] is ", describe(shape[i]), ", expected a non-negative integer");
    info.shape.push_back(static_cast<int64_t>(*dim));
  }
  // The tensor must fit in the data section, so its bit count is bounded by 8 * data_size.
  const uint64_t max_bits = std::min(data_size, std::numeric_limits<uint64_t>::max() / 8) * 8;
  const auto elements = element_count(info.shape, max_bits / known->bits);
  DIFFTX_CHECK(elements.has_value(), where, ": shape ", format_shape(info.shape), " of dtype ",
               info.dtype, " needs more bytes than the file's data section holds (", data_size, ")");
  info.elements = *elements;
  DIFFTX_CHECK(info.elements * known->bits % 8 == 0, where, ": ", info.elements, " elements of ",
               info.dtype, " do not fill a whole number of bytes");
  const uint64_t bytes = info.elements * known->bits / 8;

  const json& offsets = entry["data_offsets"];
  DIFFTX_CHECK(offsets.is_array() && offsets.size() == 2, where, ": data_offsets is ",
               offsets.is_array() ? "an array of " + std::to_string(offsets.size()) : describe(offsets),
               ", expected [begin, end]");
  const auto begin = as_unsigned(offsets[0]);
  const auto end = as_unsigned(offsets[1]);
  DIFFTX_CHECK(begin && end, where, ": data_offsets [", describe(offsets[0]), ", ",
               describe(offsets[1]), "] are not non-negative integers");
  DIFFTX_CHECK(*begin <= *end, where, ": data_offsets [", *begin, ", ", *end, "] are reversed");
  DIFFTX_CHECK(*end <= data_size, where, ": data_offsets [", *begin, ", ", *end,
               "] run past the end of the data section (", data_size, " bytes)");
  DIFFTX_CHECK(*end - *begin == bytes, where, ": data_offsets [", *begin, ", ", *end, "] span ",
               *end - *begin, " bytes, but shape ", format_shape(info.shape), " of ", info.dtype,
               " needs ", bytes);
  info.data_begin = *begin;
  info.data_end = *end;
  return info;
}

// The tensors must tile the data section exactly: no overlap, no gap, nothing left over
// (as the format requires; it keeps files from hiding other content).
void check_coverage(const std::map<std::string, SafetensorsTensorInfo>& tensors, uint64_t data_size,
                    const std::string& file) {
  std::vector<std::pair<const std::string*, const SafetensorsTensorInfo*>> by_offset;
  for (const auto& [name, info] : tensors) by_offset.emplace_back(&name, &info);
  std::sort(by_offset.begin(), by_offset.end(), [](const auto& a, const auto& b) {
    return std::pair(a.second->data_begin, a.second->data_end) <
           std::pair(b.second->data_begin, b.second->data_end);
  });
  uint64_t covered = 0;
  const std::string* previous = nullptr;
  for (const auto& [name, info] : by_offset) {
    DIFFTX_CHECK(info->data_begin >= covered, file, ": tensor '", *name, "' data_offsets [",
                 info->data_begin, ", ", info->data_end, "] overlap tensor '", *previous,
                 "', which ends at ", covered);
    DIFFTX_CHECK(info->data_begin == covered, file, ": bytes [", covered, ", ", info->data_begin,
                 ") of the data section belong to no tensor (gap before tensor '", *name, "')");
    covered = info->data_end;
    previous = name;
  }
  DIFFTX_CHECK(covered == data_size, file, ": the data section has ", data_size,
               " bytes but the tensors cover only ", covered);
}

// The format's header is JSON starting with '{'; nlohmann would skip a UTF-8 byte-order mark,
// which other readers refuse, so refuse it here too.
void check_no_byte_order_mark(std::string_view text, const std::string& file) {
  DIFFTX_CHECK(text.substr(0, 3) != "\xEF\xBB\xBF", file,
               ": header starts with a UTF-8 byte-order mark (the format allows none)");
}

Header parse_header(std::string_view text, uint64_t data_size, const std::string& file) {
  check_no_byte_order_mark(text, file);
  const json root = parse_header_json(text, file);
  Header header;
  for (const auto& [key, value] : root.items()) {
    if (key == "__metadata__")
      header.metadata = parse_metadata(value, file);
    else
      header.tensors.emplace(key, parse_entry(key, value, data_size, file));
  }
  check_coverage(header.tensors, data_size, file);
  return header;
}

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Round to nearest like the hardware, but without the undefined behaviour of converting an
// out-of-range double: magnitudes that round past FLT_MAX become infinity.
float double_to_float(double x) {
  constexpr double kOverflow = 0x1.ffffffp+127;  // FLT_MAX plus half an ulp rounds up
  if (std::fabs(x) >= kOverflow) return std::copysign(std::numeric_limits<float>::infinity(), x);
  return static_cast<float>(x);
}

}  // namespace

SafetensorsReader::SafetensorsReader(const std::filesystem::path& path) : file_(path) {
  const std::string name = path.string();
  const uint64_t size = file_.size();
  DIFFTX_CHECK(size >= 8, name, ": ", size, " bytes is shorter than the 8-byte safetensors header length");
  unsigned char length_bytes[8];
  file_.read_at(0, length_bytes, 8);
  const uint64_t header_bytes = load<uint64_t>(length_bytes);
  DIFFTX_CHECK(header_bytes <= kSafetensorsMaxHeaderBytes, name, ": header length ", header_bytes,
               " exceeds the format's limit of ", kSafetensorsMaxHeaderBytes, " bytes");
  DIFFTX_CHECK(header_bytes <= size - 8, name, ": header length ", header_bytes, " runs past the end of the file (",
               size, " bytes)");
  std::string text(header_bytes, '\0');
  file_.read_at(8, text.data(), header_bytes);
  data_start_ = 8 + header_bytes;
  Header header = parse_header(text, size - data_start_, name);
  tensors_ = std::move(header.tensors);
  metadata_ = std::move(header.metadata);
}

std::vector<std::string> SafetensorsReader::names() const {
  std::vector<std::string> out;
  for (const auto& entry : tensors_) out.push_back(entry.first);
  return out;
}

const SafetensorsTensorInfo& SafetensorsReader::info(const std::string& name) const {
  const auto it = tensors_.find(name);
  DIFFTX_CHECK(it != tensors_.end(), path().string(), ": no tensor named '", name, "' (the file has ",
               tensors_.size(), " tensors)");
  return it->second;
}

const SafetensorsTensorInfo& SafetensorsReader::checked_info(const std::string& name,
                                                             const OptionalShape& expected_shape) const {
  const SafetensorsTensorInfo& found = info(name);
  DIFFTX_CHECK(!expected_shape || *expected_shape == found.shape, path().string(), ": tensor '", name,
               "' has shape ", format_shape(found.shape), ", expected ",
               expected_shape ? format_shape(*expected_shape) : "");
  return found;
}

template <typename Convert>
void SafetensorsReader::read_chunks(const SafetensorsTensorInfo& info, uint64_t element_bytes,
                                    Convert convert) const {
  const uint64_t per_chunk = kChunkBytes / element_bytes;
  std::vector<unsigned char> raw(std::min(info.elements, per_chunk) * element_bytes);
  for (uint64_t first = 0; first < info.elements; first += per_chunk) {
    const uint64_t n = std::min(per_chunk, info.elements - first);
    file_.read_at(data_start_ + info.data_begin + first * element_bytes, raw.data(), n * element_bytes);
    convert(raw.data(), n, first);
  }
}

std::vector<float> SafetensorsReader::read_f32(const std::string& name,
                                               const OptionalShape& expected_shape) const {
  std::vector<float> out(checked_info(name, expected_shape).elements);
  read_f32(name, out, expected_shape);
  return out;
}

const SafetensorsTensorInfo& SafetensorsReader::check_f32(const std::string& name,
                                                          const OptionalShape& expected_shape) const {
  const SafetensorsTensorInfo& info = checked_info(name, expected_shape);
  DIFFTX_CHECK(info.dtype == "F32" || info.dtype == "F16" || info.dtype == "BF16" || info.dtype == "F64",
               path().string(), ": tensor '", name, "' has dtype ", info.dtype,
               ", expected a float dtype (F32, F16, BF16 or F64)");
  return info;
}

void SafetensorsReader::read_f32(const std::string& name, std::span<float> out,
                                 const OptionalShape& expected_shape) const {
  const SafetensorsTensorInfo& info = check_f32(name, expected_shape);
  DIFFTX_CHECK(out.size() == info.elements, path().string(), ": tensor '", name, "' has ", info.elements,
               " elements, but the destination holds ", out.size());
  float* dst = out.data();
  if (info.dtype == "F32") {
    file_.read_at(data_start_ + info.data_begin, dst, info.data_end - info.data_begin);
  } else if (info.dtype == "F16") {
    read_chunks(info, 2, [&](const unsigned char* raw, uint64_t n, uint64_t first) {
      for (uint64_t i = 0; i < n; ++i) dst[first + i] = f16_to_float(load<uint16_t>(raw + 2 * i));
    });
  } else if (info.dtype == "BF16") {
    read_chunks(info, 2, [&](const unsigned char* raw, uint64_t n, uint64_t first) {
      for (uint64_t i = 0; i < n; ++i) dst[first + i] = bf16_to_float(load<uint16_t>(raw + 2 * i));
    });
  } else if (info.dtype == "F64") {
    read_chunks(info, 8, [&](const unsigned char* raw, uint64_t n, uint64_t first) {
      for (uint64_t i = 0; i < n; ++i) dst[first + i] = double_to_float(load<double>(raw + 8 * i));
    });
  } else {
    fail("internal: ", path().string(), ": tensor '", name, "' passed check_f32 with dtype ", info.dtype);
  }
}

void SafetensorsReader::read_bytes(const std::string& name, std::span<unsigned char> out) const {
  const SafetensorsTensorInfo& found = info(name);
  DIFFTX_CHECK(out.size() == found.data_end - found.data_begin, path().string(), ": tensor '", name, "' holds ",
               found.data_end - found.data_begin, " bytes, but the destination holds ", out.size());
  file_.read_at(data_start_ + found.data_begin, out.data(), out.size());
}

std::vector<int32_t> SafetensorsReader::read_i32(const std::string& name,
                                                 const OptionalShape& expected_shape) const {
  const SafetensorsTensorInfo& info = checked_info(name, expected_shape);
  std::vector<int32_t> out(info.elements);
  if (info.dtype == "I32") {
    file_.read_at(data_start_ + info.data_begin, out.data(), info.data_end - info.data_begin);
  } else if (info.dtype == "I64") {
    read_chunks(info, 8, [&](const unsigned char* raw, uint64_t n, uint64_t first) {
      for (uint64_t i = 0; i < n; ++i) {
        const auto v = load<int64_t>(raw + 8 * i);
        DIFFTX_CHECK(v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(),
                     path().string(), ": tensor '", name, "' element ", first + i, " is ", v,
                     ", outside the int32 range");
        out[first + i] = static_cast<int32_t>(v);
      }
    });
  } else {
    fail(path().string(), ": tensor '", name, "' has dtype ", info.dtype,
         ", expected an integer dtype (I32 or I64)");
  }
  return out;
}

}  // namespace difftx::io
