#include "io/gguf.h"

#include <bit>
#include <limits>

#include "core/error.h"
#include "io/atomic_file.h"

namespace difftx {

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian");

namespace {

struct TypeTraits {
  int64_t block;         // elements per block
  uint64_t block_bytes;  // bytes per block
};

TypeTraits traits(GgmlType type) {
  switch (type) {
    case GgmlType::f32: return {1, 4};
    case GgmlType::f16: return {1, 2};
    case GgmlType::bf16: return {1, 2};
    case GgmlType::q8_0: return {32, 34};   // fp16 scale + 32 int8
    case GgmlType::q4_0: return {32, 18};   // fp16 scale + 16 bytes of nibbles
    case GgmlType::q4_k: return {256, 144};  // fp16 d, dmin, 12 bytes of 6-bit scales, 128 of nibbles
  }
  fail("GGUF: unknown ggml type ", static_cast<uint32_t>(type));
}

// GGUF metadata value types.
enum : uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9, kU64 = 10 };

class ByteSink {
 public:
  template <typename T>
  void put(T value) {
    const auto* p = reinterpret_cast<const char*>(&value);
    bytes_.append(p, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    bytes_.append(s);
  }
  void pad_to(uint64_t alignment) { bytes_.append((alignment - bytes_.size() % alignment) % alignment, '\0'); }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

void put_value(ByteSink& out, const GgufValue& value) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, uint32_t>) { out.put(kU32); out.put(v); }
        else if constexpr (std::is_same_v<T, int32_t>) { out.put(kI32); out.put(v); }
        else if constexpr (std::is_same_v<T, uint64_t>) { out.put(kU64); out.put(v); }
        else if constexpr (std::is_same_v<T, float>) { out.put(kF32); out.put(v); }
        else if constexpr (std::is_same_v<T, bool>) { out.put(kBool); out.put<uint8_t>(v ? 1 : 0); }
        else if constexpr (std::is_same_v<T, std::string>) { out.put(kString); out.put_string(v); }
        else {
          out.put(kArray);
          using E = typename T::value_type;
          out.put(std::is_same_v<E, std::string> ? kString : std::is_same_v<E, int32_t> ? kI32 : kF32);
          out.put<uint64_t>(v.size());
          for (const E& e : v) {
            if constexpr (std::is_same_v<E, std::string>) out.put_string(e);
            else out.put(e);
          }
        }
      },
      value);
}

}  // namespace

const char* ggml_type_name(GgmlType type) {
  switch (type) {
    case GgmlType::f32: return "f32";
    case GgmlType::f16: return "f16";
    case GgmlType::bf16: return "bf16";
    case GgmlType::q8_0: return "q8_0";
    case GgmlType::q4_0: return "q4_0";
    case GgmlType::q4_k: return "q4_k";
  }
  return "?";
}

uint64_t ggml_row_bytes(GgmlType type, int64_t columns) {
  const TypeTraits t = traits(type);
  DIFFTX_CHECK(columns > 0 && columns % t.block == 0, "GGUF: a row of ", columns, " elements is not a whole number of ",
               ggml_type_name(type), " blocks of ", t.block);
  return static_cast<uint64_t>(columns / t.block) * t.block_bytes;
}

void GgufWriter::add(const std::string& key, GgufValue value) {
  for (const auto& [k, v] : metadata_) DIFFTX_CHECK(k != key, "GGUF: metadata key '", key, "' set twice");
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::add_tensor(const std::string& name, const std::vector<int64_t>& shape, GgmlType type,
                            std::span<const uint8_t> data) {
  DIFFTX_CHECK(!name.empty() && name.size() <= 64, "GGUF: tensor name '", name.substr(0, 80),
               "' must have 1 to 64 bytes");
  for (const Tensor& t : tensors_) DIFFTX_CHECK(t.name != name, "GGUF: tensor '", name, "' added twice");
  DIFFTX_CHECK(!shape.empty() && shape.size() <= 4, "GGUF: tensor '", name, "' must have 1 to 4 dimensions");
  uint64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) {
    DIFFTX_CHECK(shape[i] > 0 && rows <= std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(shape[i]),
                 "GGUF: tensor '", name, "' has a bad shape");
    rows *= static_cast<uint64_t>(shape[i]);
  }
  const uint64_t row_bytes = ggml_row_bytes(type, shape.back());
  DIFFTX_CHECK(rows <= std::numeric_limits<uint64_t>::max() / row_bytes && rows * row_bytes == data.size(),
               "GGUF: tensor '", name, "' of type ", ggml_type_name(type), " needs ", rows, " x ", row_bytes,
               " bytes, got ", data.size());
  tensors_.push_back({name, shape, type, data});
}

void GgufWriter::write(const std::filesystem::path& path) const {
  ByteSink head;
  head.put<uint32_t>(0x46554747);  // "GGUF"
  head.put<uint32_t>(3);
  head.put<uint64_t>(tensors_.size());
  head.put<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    head.put_string(key);
    put_value(head, value);
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    head.put_string(t.name);
    head.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
    for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) head.put<uint64_t>(static_cast<uint64_t>(*d));
    head.put<uint32_t>(static_cast<uint32_t>(t.type));
    head.put<uint64_t>(offset);
    offset += (t.data.size() + kGgufAlignment - 1) / kGgufAlignment * kGgufAlignment;
  }
  head.pad_to(kGgufAlignment);

  AtomicFileWriter out(path);
  out.write(head.bytes());
  static const char zeros[kGgufAlignment] = {};
  for (const Tensor& t : tensors_) {
    out.write(t.data.data(), t.data.size());
    out.write(zeros, (kGgufAlignment - t.data.size() % kGgufAlignment) % kGgufAlignment);
  }
  out.commit();
}

}  // namespace difftx
