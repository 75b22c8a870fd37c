#include "data/normalizer.h"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <vector>

#include "core/error.h"

namespace difftx::data {
namespace {

void check_icu(UErrorCode status, const char* what) {
  DIFFTX_CHECK(U_SUCCESS(status), "NFC normalization: ", what, " failed (", u_errorName(status), ")");
}

std::string_view nfc(std::string_view text, std::string& buffer) {
  // Every character below U+0300 is its own NFC and starts no composition, and UTF-8 encodes
  // U+0300 and above with lead bytes from 0xCC: text without such bytes is unchanged.
  bool simple = true;
  for (char c : text) simple &= static_cast<unsigned char>(c) < 0xCC;
  if (simple) return text;
  DIFFTX_CHECK(text.size() < (size_t{1} << 30), "NFC normalization: text of ", text.size(),
               " bytes is too long (at most 1 GiB at a time)");
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* normalizer = unorm2_getNFCInstance(&status);
  check_icu(status, "loading the NFC data");
  std::vector<UChar> utf16(text.size() + 1);
  int32_t length16 = 0;
  u_strFromUTF8(utf16.data(), static_cast<int32_t>(utf16.size()), &length16, text.data(),
                static_cast<int32_t>(text.size()), &status);
  check_icu(status, "UTF-8 to UTF-16");
  if (unorm2_isNormalized(normalizer, utf16.data(), length16, &status) && U_SUCCESS(status)) return text;
  status = U_ZERO_ERROR;
  // NFC can grow text by at most 3x (Unicode's stated bound for NFC).
  std::vector<UChar> normal(static_cast<size_t>(length16) * 3 + 1);
  const int32_t normal_length = unorm2_normalize(normalizer, utf16.data(), length16, normal.data(),
                                                 static_cast<int32_t>(normal.size()), &status);
  check_icu(status, "normalizing");
  buffer.resize(static_cast<size_t>(normal_length) * 3 + 1);
  int32_t length8 = 0;
  u_strToUTF8(buffer.data(), static_cast<int32_t>(buffer.size()), &length8, normal.data(), normal_length,
              &status);
  check_icu(status, "UTF-16 to UTF-8");
  buffer.resize(static_cast<size_t>(length8));
  return buffer;
}

}  // namespace

std::string_view normalize(Normalization n, std::string_view text, std::string& buffer) {
  return n == Normalization::nfc ? nfc(text, buffer) : text;
}

}  // namespace difftx::data
