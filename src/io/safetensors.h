// The safetensors format (docs/FORMATS.md "safetensors"): an 8-byte little-endian header
// length N, N bytes of JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}},
// then the data section, which the tensors cover exactly, without gaps or overlaps.
//
// The reader validates the whole header when it opens a file, so that no later read can
// leave the file's bounds, and converts F32, F16, BF16 and F64 to float32 and I32 and I64 to
// int32 on load. Every error names the file and, where there is one, the tensor.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "io/input_file.h"

namespace difftx::io {

// Headers longer than this are refused (the reference implementation's limit), before any
// allocation.
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

struct SafetensorsTensorInfo {
  std::string dtype;           // as the file spells it: "F32", "BF16", "I64", ...
  std::vector<int64_t> shape;  // C order; [] is a scalar
  uint64_t elements = 0;
  uint64_t data_begin = 0;  // byte range [data_begin, data_end) within the data section
  uint64_t data_end = 0;
};

class SafetensorsReader {
 public:
  using OptionalShape = std::optional<std::vector<int64_t>>;

  // Opens and validates `path`; Error on anything that does not follow the format.
  explicit SafetensorsReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  const SafetensorsTensorInfo& info(const std::string& name) const;
  // The optional "__metadata__" map (empty when the file has none).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // Tensor `name` as float32, from F32, F16, BF16 or F64. With `expected_shape`, a different
  // shape is an Error naming both (pass std::vector<int64_t>{} to require a scalar). Values
  // beyond float range (F64 only) become +-inf.
  std::vector<float> read_f32(const std::string& name,
                              const OptionalShape& expected_shape = std::nullopt) const;
  // The same into a caller's buffer, whose size must equal the tensor's element count.
  void read_f32(const std::string& name, std::span<float> out,
                const OptionalShape& expected_shape = std::nullopt) const;
  // The checks read_f32 makes before it reads: Error unless tensor `name` exists, has
  // `expected_shape` (when given) and a float dtype.
  const SafetensorsTensorInfo& check_f32(const std::string& name,
                                         const OptionalShape& expected_shape = std::nullopt) const;
  // Tensor `name`'s bytes as the file stores them; out.size() must equal the tensor's byte count.
  void read_bytes(const std::string& name, std::span<unsigned char> out) const;
  // Tensor `name` as int32, from I32 or I64 (an I64 value outside int32 range is an Error).
  std::vector<int32_t> read_i32(const std::string& name,
                                const OptionalShape& expected_shape = std::nullopt) const;

 private:
  const SafetensorsTensorInfo& checked_info(const std::string& name,
                                            const OptionalShape& expected_shape) const;
  // Calls convert(raw bytes, element count, index of the first element) over the tensor's
  // data in chunks of bounded size.
  template <typename Convert>
  void read_chunks(const SafetensorsTensorInfo& info, uint64_t element_bytes, Convert convert) const;

  InputFile file_;
  uint64_t data_start_ = 0;  // file offset of the data section
  std::map<std::string, SafetensorsTensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// How float data is stored: as it is (F32), or rounded to BF16 or F16 (io/float16.h).
enum class StoredFloat { f32, bf16, f16 };
const char* stored_float_name(StoredFloat type);  // "F32", "BF16", "F16" as safetensors spells them

// Data already in its stored form: "BF16" or "F16" (2 bytes an element) or "U8" (1 byte).
struct StoredBytes {
  std::string dtype;
  std::span<const unsigned char> bytes;
};

// One tensor to write, borrowing the caller's data: F32 or I32 by the span's element type (float
// data is stored as `stored` says), or bytes written as they are.
struct SafetensorsEntry {
  std::string name;
  std::vector<int64_t> shape;
  std::variant<std::span<const float>, std::span<const int32_t>, StoredBytes> data;
  StoredFloat stored = StoredFloat::f32;
};

// Writes `tensors` (names sorted, data in that order, header padded with spaces so the data
// starts 8-byte aligned) and `metadata` as "__metadata__", atomically (io/atomic_file.h).
// Error for an empty, reserved or repeated name, a negative dimension, or a data span whose
// size differs from the shape's element count.
void write_safetensors(const std::filesystem::path& path, std::span<const SafetensorsEntry> tensors,
                       const std::map<std::string, std::string>& metadata = {});

// A tensor declared before its data exists, so that a file larger than memory can be written one
// tensor at a time: the header needs only names, shapes and dtypes.
struct SafetensorsTensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;  // as written: "F32", "BF16", "F16", "I32" or "U8"
};

// The streaming form: writes the header from `specs` (the same bytes write_safetensors writes for
// entries of those names, shapes and dtypes), then asks `data` for each tensor in the file's
// order (names sorted) and appends it. The entry `data` returns borrows the caller's memory until
// the next call; an entry whose name, shape or written dtype differs from its spec is an Error,
// and so is any failure: the target is then left as it was (io/atomic_file.h).
using SafetensorsData = std::function<SafetensorsEntry(const SafetensorsTensorSpec& spec)>;
void write_safetensors(const std::filesystem::path& path, std::span<const SafetensorsTensorSpec> specs,
                       const std::map<std::string, std::string>& metadata, const SafetensorsData& data);

}  // namespace difftx::io
