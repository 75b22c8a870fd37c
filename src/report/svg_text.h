// Text and numbers made safe for SVG and HTML: any byte string becomes well-formed XML text,
// and numbers never reach a document as "nan" or "inf".
#pragma once
#include <string>
#include <string_view>

namespace difftx::report {

// XML/HTML text or attribute value: & < > " ' escaped; invalid UTF-8 bytes and characters XML
// 1.0 forbids (controls other than tab, LF and CR; U+FFFE, U+FFFF) become U+FFFD.
std::string xml_escape(std::string_view text);

// A token string as a reader should see it (not yet escaped): spaces as U+00B7 '·', newline as
// U+21B5 '↵', tab as U+21E5 '⇥', other controls as their U+2400 picture; "" as U+2205 '∅'.
// Longer than max_chars code points: cut, with '…' at the end.
std::string visible_token(std::string_view token, size_t max_chars = 12);

// A coordinate or length in an SVG attribute: at most 2 decimals, no trailing zeros, "-0" as
// "0". Error for NaN or infinity (a chart bug: data gaps are handled before drawing).
std::string svg_number(double v);

// At most `max_decimals` decimals, trailing zeros dropped: (2.50, 2) -> "2.5"; "n/a" for NaN or
// infinity.
std::string format_trimmed(double v, int max_decimals);
// A data value for a reader: `decimals` fixed decimals; "n/a" for NaN or infinity.
std::string format_fixed(double v, int decimals);
// About `digits` significant digits without exponent for |v| in [1e-3, 1e6), else d.dde±N;
// "n/a" for NaN or infinity.
std::string format_significant(double v, int digits = 3);
// A count with SI suffix for people: 10130000 -> "10.1M", 2048 -> "2.05k", 512 -> "512".
std::string format_count(double v);
// Thousands separated: 2000000 -> "2,000,000"; "n/a" for NaN or infinity.
std::string format_grouped(double v);

}  // namespace difftx::report
