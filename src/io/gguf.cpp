#include "io/gguf.h"

#include <bit>

#include "core/error.h"
#include "io/atomic_file.h"

namespace difftx::io {

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian");

namespace {

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

void GgufWriter::add(const std::string& key, GgufValue value) {
  for (const auto& [k, v] : metadata_) DIFFTX_CHECK(k != key, "GGUF: metadata key '", key, "' set twice");
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::add_tensor(const std::string& name, const std::vector<int64_t>& shape, uint32_t ggml_type,
                            std::span<const uint8_t> data) {
  add_tensor(name, shape, ggml_type, uint64_t{data.size()});
  tensors_.back().data = data;
  tensors_.back().deferred = false;
}

void GgufWriter::add_tensor(const std::string& name, const std::vector<int64_t>& shape, uint32_t ggml_type,
                            uint64_t bytes) {
  DIFFTX_CHECK(!name.empty() && name.size() <= 64, "GGUF: tensor name '", name.substr(0, 80),
               "' must have 1 to 64 bytes");
  for (const Tensor& t : tensors_) DIFFTX_CHECK(t.name != name, "GGUF: tensor '", name, "' added twice");
  DIFFTX_CHECK(!shape.empty() && shape.size() <= 4, "GGUF: tensor '", name, "' must have 1 to 4 dimensions");
  for (int64_t d : shape) DIFFTX_CHECK(d > 0, "GGUF: tensor '", name, "' has a dimension ", d);
  DIFFTX_CHECK(bytes > 0, "GGUF: tensor '", name, "' has no data");
  tensors_.push_back({name, shape, ggml_type, {}, bytes, true});
}

void GgufWriter::write(const std::filesystem::path& path, const TensorData& data) const {
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
    DIFFTX_CHECK(!t.deferred || data, "GGUF: tensor '", t.name, "' was added by size, and write() has no data for it");
    head.put_string(t.name);
    head.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
    for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) head.put<uint64_t>(static_cast<uint64_t>(*d));
    head.put<uint32_t>(t.ggml_type);
    head.put<uint64_t>(offset);
    offset += (t.bytes + kGgufAlignment - 1) / kGgufAlignment * kGgufAlignment;
  }
  head.pad_to(kGgufAlignment);

  AtomicFileWriter out(path);
  out.write(head.bytes());
  static const char zeros[kGgufAlignment] = {};
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    const std::span<const uint8_t> bytes = t.deferred ? data(i) : t.data;
    DIFFTX_CHECK(bytes.size() == t.bytes, "GGUF: tensor '", t.name, "' declared ", t.bytes, " bytes, but ",
                 bytes.size(), " came");
    out.write(bytes.data(), bytes.size());
    out.write(zeros, (kGgufAlignment - bytes.size() % kGgufAlignment) % kGgufAlignment);
  }
  out.commit();
}

}  // namespace difftx::io
