// jinja2's filters that format text: truncate, filesizeformat and urlencode.
#pragma once
#include "chat/value.h"

namespace difftx::chat {

// truncate(length=255, killwords=False, end='...', leeway=5): the text cut to length, at a space
// unless killwords, with `end` added; kept whole within length + leeway.
Value truncate(const Value& v, const CallArgs& a);
// filesizeformat(binary=False): "1 Byte", "13 Bytes", "1.2 kB" (powers of 1000, or of 1024: KiB).
Value filesizeformat(const Value& v, const CallArgs& a);
// urlencode: a string (or a number) percent-encoded as a URL path, or a dict's items (or a list
// of pairs) as a query string.
Value urlencode(const Value& v, const CallArgs& a);

}  // namespace difftx::chat
