#include "io/npy.h"

#include <bit>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <string_view>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/shape.h"

namespace difftx::io {

static_assert(std::endian::native == std::endian::little,
              "npy files are written little-endian; a big-endian host would need byte swaps");

namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr size_t kHeaderAlign = 64;  // numpy aligns the data to 64 bytes

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// The header dict as numpy writes it: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// A small parser for exactly that grammar: quoted keys and strings, True/False, and tuples of
// non-negative integers.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  NpyHeader parse() {
    NpyHeader header;
    std::set<std::string> seen;
    expect('{');
    while (!peek_is('}')) {
      const std::string key = string_literal();
      DIFFTX_CHECK(seen.insert(key).second, file_, ": npy header repeats key '", key, "'");
      expect(':');
      if (key == "descr")
        header.descr = string_literal();
      else if (key == "fortran_order")
        header.fortran_order = boolean();
      else if (key == "shape")
        header.shape = tuple();
      else
        fail(file_, ": npy header has unexpected key '", key, "'");
      separator('}');
    }
    expect('}');
    skip_space();
    DIFFTX_CHECK(pos_ == text_.size(), file_, ": npy header has text after its closing '}'");
    DIFFTX_CHECK(seen.size() == 3, file_, ": npy header lacks one of 'descr', 'fortran_order', 'shape'");
    return header;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }
  bool peek_is(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  [[noreturn]] void unexpected(const std::string& wanted) {
    fail(file_, ": npy header: expected ", wanted, " at character ", pos_, " of the header");
  }
  void expect(char c) {
    if (!peek_is(c)) unexpected(std::string("'") + c + "'");
    ++pos_;
  }
  // After an item: a comma, or the closing bracket (left for the caller to consume).
  void separator(char close) {
    if (peek_is(close)) return;
    if (!peek_is(',')) unexpected(std::string("',' or '") + close + "'");
    ++pos_;
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) unexpected("a quoted string");
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) unexpected("a closing quote");
    std::string value(text_.substr(pos_, end - pos_));
    DIFFTX_CHECK(value.find('\\') == std::string::npos, file_, ": npy header: escapes in strings are not supported");
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    unexpected("True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (!peek_is(')')) {
      if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') unexpected("a non-negative integer");
      int64_t value = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        DIFFTX_CHECK(!__builtin_mul_overflow(value, 10, &value) &&
                         !__builtin_add_overflow(value, text_[pos_] - '0', &value),
                     file_, ": npy header: a shape dimension overflows int64");
        ++pos_;
      }
      dims.push_back(value);
      separator(')');
    }
    expect(')');
    return dims;
  }

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
};

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct RawArray {
  NpyHeader header;
  uint64_t elements = 0;
  std::string bytes;  // the whole file
  size_t data_offset = 0;
};

// Reads and validates the file; `item_size(descr)` gives the element size of an accepted
// dtype, or 0 to refuse it (with `accepted` naming the dtypes in the message).
template <typename ItemSize>
RawArray read_raw(const std::filesystem::path& path, ItemSize item_size, const char* accepted) {
  const std::string file = path.string();
  RawArray raw;
  raw.bytes = read_whole_file(path);
  const std::string& b = raw.bytes;
  DIFFTX_CHECK(b.size() >= 10 && std::string_view(b).substr(0, 6) == kMagic, file,
               ": not an npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(b[6]);
  DIFFTX_CHECK(major >= 1 && major <= 3, file, ": npy version ", major, ".", static_cast<int>(b[7]),
               " is not supported (1.0 to 3.0 are)");
  const size_t length_bytes = major == 1 ? 2 : 4;
  DIFFTX_CHECK(b.size() >= 8 + length_bytes, file, ": npy file ends inside its header length");
  const uint64_t header_len = major == 1 ? load<uint16_t>(&b[8]) : load<uint32_t>(&b[8]);
  const size_t header_start = 8 + length_bytes;
  DIFFTX_CHECK(header_len <= b.size() - header_start, file, ": npy header length ", header_len,
               " runs past the end of the file (", b.size(), " bytes)");
  raw.header = HeaderParser(std::string_view(b).substr(header_start, header_len), file).parse();
  raw.data_offset = header_start + header_len;

  const NpyHeader& h = raw.header;
  const size_t size = item_size(h.descr);
  DIFFTX_CHECK(size != 0, file, ": npy dtype '", h.descr, "' is not supported here (accepted: ", accepted, ")");
  DIFFTX_CHECK(!h.fortran_order, file, ": npy array is in Fortran order; only C order is supported");
  const uint64_t data_bytes = b.size() - raw.data_offset;
  const auto elements = element_count(h.shape, data_bytes / size);
  DIFFTX_CHECK(elements && *elements * size == data_bytes, file, ": npy shape ", format_shape(h.shape), " of '",
               h.descr, "' does not match the ", data_bytes, " data bytes in the file");
  raw.elements = *elements;
  return raw;
}

std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

void write_npy(const std::filesystem::path& path, const std::vector<int64_t>& shape,
               std::span<const float> data) {
  const auto elements = element_count(shape, std::numeric_limits<uint64_t>::max());
  DIFFTX_CHECK(elements == data.size(), "cannot write '", path.string(), "': shape ", format_shape(shape),
               " does not match ", data.size(), " elements of data");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
  const size_t prefix = kMagic.size() + 4;  // magic, version 1.0, uint16 header length
  header.append((kHeaderAlign - (prefix + header.size() + 1) % kHeaderAlign) % kHeaderAlign, ' ');
  header += '\n';
  DIFFTX_CHECK(header.size() <= std::numeric_limits<uint16_t>::max(), "cannot write '", path.string(),
               "': shape ", format_shape(shape), " makes the npy 1.0 header too long");

  const auto header_len = static_cast<uint16_t>(header.size());
  AtomicFileWriter out(path);
  out.write(kMagic);
  out.write(std::string_view("\x01\x00", 2));
  out.write(&header_len, sizeof header_len);
  out.write(header);
  out.write(data.data(), data.size_bytes());
  out.commit();
}

NpyArray<float> read_npy_f32(const std::filesystem::path& path) {
  const RawArray raw = read_raw(path, [](const std::string& d) { return d == "<f4" ? 4 : 0; }, "'<f4'");
  NpyArray<float> out{raw.header.shape, std::vector<float>(raw.elements)};
  if (raw.elements > 0)
    std::memcpy(out.data.data(), raw.bytes.data() + raw.data_offset, raw.elements * sizeof(float));
  return out;
}

NpyArray<int64_t> read_npy_i64(const std::filesystem::path& path) {
  const RawArray raw = read_raw(path, [](const std::string& d) { return d == "<i4" ? 4 : d == "<i8" ? 8 : 0; },
                                "'<i4', '<i8'");
  NpyArray<int64_t> out{raw.header.shape, std::vector<int64_t>(raw.elements)};
  const char* src = raw.bytes.data() + raw.data_offset;
  for (uint64_t i = 0; i < raw.elements; ++i)
    out.data[i] = raw.header.descr == "<i4" ? load<int32_t>(src + 4 * i) : load<int64_t>(src + 8 * i);
  return out;
}

}  // namespace difftx::io
