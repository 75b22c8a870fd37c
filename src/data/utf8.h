// UTF-8 validation, done once per input before PCRE2 matches it with PCRE2_NO_UTF_CHECK
// (PCRE2 would otherwise re-check the whole subject on every match call: quadratic); encoding a
// code point; and the hexadecimal digits of the escapes that name one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace difftx::data {

// Length of the longest prefix of text that is well-formed UTF-8 (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), so text.size() when all of it is valid.
size_t valid_utf8_prefix(std::string_view text);

// Characters in UTF-8 text: its bytes that start one (not 10xxxxxx), so a character split
// between two pieces counts once, in the piece holding its first byte.
size_t utf8_characters(std::string_view text);

// Appends the UTF-8 encoding of code point cp (at most U+10FFFF) to out.
void append_utf8(uint32_t cp, std::string& out);

// The value of a hexadecimal digit (0-9, a-f, A-F); -1 for any other character or code point.
int hex_digit_value(uint32_t c);

// The character a one-letter Python string escape stands for (\\ \' \" \a \b \f \n \r \t \v);
// -1 for another letter.
int python_simple_escape(char e);

// Throws difftx::Error "WHAT: invalid UTF-8 at byte offset N (bytes ...)" unless text is valid.
void check_utf8(std::string_view text, const std::string& what);

}  // namespace difftx::data
