// The pieces Python's two formatting languages share: `format % args` (percent_format.cpp) and the
// format specs of str.format (format_spec.cpp): widths, digits in a base, floats as C's printf
// prints them, %c's code point, truncation and padding by code point.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "chat/value.h"

namespace difftx::chat {

// Widths and precisions beyond this are refused, not allocated (Python would build the string).
constexpr int64_t kMaxFormatField = 100000;

// A width or precision: the decimal digits at s[i] (i moves past them), nullopt where there are none;
// past kMaxFormatField a TemplateError naming `what`.
std::optional<int64_t> format_field_digits(const std::string& s, size_t& i, const char* what);
// Fails as format_field_digits does for a width or precision given as a value (%*d).
void check_format_field(Int value, const char* what);

// |i| in base 2, 8, 10 or 16 (upper: A-F).
std::string magnitude_digits(Int i, int base, bool upper);

// |x| as C's printf "%.{precision}{conversion}" prints it (conversion e, E, f, F, g or G; alternate:
// the '#' flag); inf and nan as Python prints them, upper case for E, F and G. Whether x is negative
// is negative_float(x) (a nan never is).
std::string float_digits(double x, char conversion, int64_t precision, bool alternate);
bool negative_float(double x);
// |x| as 'g' prints it, %e's form where the exponent is below -4 or from `exponent_from` on (the
// precision for 'g'), else %f's; trailing zeros dropped unless alternate. (glibc's own %#g drops a
// digit where rounding carries into the exponent: 99.99 as "%#.2g" is "1.e+02", Python's "1.0e+02".)
std::string general_digits(double x, int64_t precision, bool alternate, bool upper, int64_t exponent_from);

// %c and {:c} of an int: its code point in UTF-8, else Python's OverflowError as a TemplateError.
std::string code_point_text(Int i);

// The first n code points of s.
std::string first_code_points(const std::string& s, int64_t n);

// s padded to `width` code points with `fill` (one code point) after it ('<'), before it ('>') or
// around it ('^', the odd one after).
std::string aligned(const std::string& s, int64_t width, char align, const std::string& fill);

// out += piece, within kMaxTextBytes (value.h): many wide fields would otherwise build a string
// far past it before Value::from could refuse it.
void append_text(std::string& out, const std::string& piece);

}  // namespace difftx::chat
