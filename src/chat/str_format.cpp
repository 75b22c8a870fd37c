// After Python's string.Formatter (Lib/string.py, what jinja2's SandboxedFormatter extends) and the
// field parser it calls (Objects/stringlib/unicode_format.h).
#include "chat/str_format.h"

#include <algorithm>
#include <cstdint>

#include "chat/access.h"
#include "chat/format_pieces.h"
#include "chat/format_spec.h"
#include "chat/template_error.h"

namespace difftx::chat {
namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// An all-digit field name or key as an index; Python fails past its Py_ssize_t, difftx past int64.
int64_t index_of(const std::string& digits) {
  const std::optional<Int> i = parse_int(digits);
  if (!i || *i > INT64_MAX) template_fail("Too many decimal digits in format string");
  return static_cast<int64_t>(*i);
}

struct Field {
  std::string name, conversion, spec;  // conversion: one code point, or empty
};

class Formatter {
 public:
  Formatter(const List& positional, const Value& keywords) : positional_(positional), keywords_(keywords) {}

  // string.Formatter._vformat: the fields of s formatted; a spec's own fields one level deep.
  std::string format(const std::string& s, int depth) {
    if (depth < 0) template_fail("Max string recursion exceeded");
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
      const size_t brace = s.find_first_of("{}", i);
      append_text(out, s.substr(i, brace == std::string::npos ? std::string::npos : brace - i));
      if (brace == std::string::npos) break;
      const char c = s[brace];
      const bool last = brace + 1 == s.size();
      if (c == '}' && (last || s[brace + 1] != '}')) template_fail("Single '}' encountered in format string");
      if (last) template_fail("Single '{' encountered in format string");
      if (s[brace + 1] == c) {  // {{ or }}
        out += c;
        i = brace + 2;
        continue;
      }
      i = brace + 1;
      const Field field = parse_field(s, i);
      append_text(out, render(field, depth));
    }
    return out;
  }

 private:
  // A field from s[i] (past its '{') to its closing '}', i moving past that.
  static Field parse_field(const std::string& s, size_t& i) {
    Field field;
    const size_t start = i;
    char c = 0;
    bool ended = false;
    while (i < s.size() && !ended) {
      c = s[i++];
      if (c == '{') template_fail("unexpected '{' in field name");
      if (c == '[')
        while (i < s.size() && s[i] != ']') ++i;
      ended = c == '}' || c == ':' || c == '!';
    }
    if (!ended) template_fail("expected '}' before end of string");
    field.name = s.substr(start, i - 1 - start);
    if (c == '}') return field;
    if (c == '!') {
      if (i == s.size()) template_fail("end of string while looking for conversion specifier");
      field.conversion = code_points(s.substr(i, 4))[0];
      i += field.conversion.size();
      if (i < s.size()) {
        const char next = s[i++];
        if (next == '}') return field;
        if (next != ':') template_fail("expected ':' after conversion specifier");
      }
    }
    const size_t spec_start = i;
    for (int open = 1; i < s.size();) {
      const char d = s[i++];
      if (d == '{') ++open;
      if (d == '}' && --open == 0) {
        field.spec = s.substr(spec_start, i - 1 - spec_start);
        return field;
      }
    }
    template_fail("unmatched '{' in format spec");
  }

  std::string render(const Field& field, int depth) {
    std::string name = field.name;
    if (name.empty()) {
      if (manual_) template_fail("cannot switch from manual field specification to automatic field numbering");
      name = std::to_string(next_auto_++);
    } else if (all_digits(name)) {
      if (!manual_ && next_auto_ > 0)
        template_fail("cannot switch from manual field specification to automatic field numbering");
      manual_ = true;
    }
    Value v = lookup(name);
    if (field.conversion == "s") v = Value::from(str(v));
    else if (field.conversion == "r") v = Value::from(repr(v));
    else if (field.conversion == "a") v = Value::from(ascii(v));
    else if (!field.conversion.empty()) template_fail("Unknown conversion specifier ", field.conversion);
    return format_value(v, format(field.spec, depth - 1));
  }

  // The argument a field name names, then its .attributes and [keys] as the sandbox follows them.
  Value lookup(const std::string& name) const {
    const size_t first_end = std::min(name.find('.'), name.find('['));
    const std::string first = name.substr(0, first_end);
    Value v;
    if (all_digits(first)) {
      const int64_t index = index_of(first);
      if (index >= static_cast<int64_t>(positional_.size())) template_fail("tuple index out of range");
      v = positional_[static_cast<size_t>(index)];
    } else {
      if (keywords_.is_undefined()) fail_undefined(keywords_);
      if (!keywords_.is_dict() || keywords_.is_namespace)
        template_fail("'", type_name(keywords_), "' object is not subscriptable");
      const Value* found = keywords_.dict->find(first);
      if (!found) template_fail("KeyError: ", repr(Value::from(first)));
      v = *found;
    }
    for (size_t i = first_end; i < name.size();) {
      const char kind = name[i++];
      if (kind != '.' && kind != '[') template_fail("Only '.' or '[' may follow ']' in format field specifier");
      const size_t end = kind == '.' ? std::min(name.find('.', i), name.find('[', i)) : name.find(']', i);
      if (kind == '[' && end == std::string::npos) template_fail("Missing ']' in format string");
      const std::string part = name.substr(i, end == std::string::npos ? std::string::npos : end - i);
      if (part.empty()) template_fail("Empty attribute in format string");
      i = end == std::string::npos ? name.size() : end + (kind == '[');
      if (kind == '.') v = get_attribute(v, part);
      else v = get_item(v, all_digits(part) ? Value::from(index_of(part)) : Value::from(part));
    }
    return v;
  }

  const List& positional_;
  const Value& keywords_;
  int64_t next_auto_ = 0;  // the next {} field's argument
  bool manual_ = false;    // a {0} field was seen: {} fields are an error from then on
};

}  // namespace

std::string str_format(const std::string& format, const List& positional, const Value& keywords) {
  return Formatter(positional, keywords).format(format, 2);
}

}  // namespace difftx::chat
