#include "support/schema_check.h"

#include <arpa/inet.h>

#include <cmath>
#include <regex>

namespace difftx::testing {
namespace {

using nlohmann::json;

int64_t code_points(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool digits(const std::string& s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

int number(const std::string& s, size_t at, size_t n) { return std::stoi(s.substr(at, n)); }

bool valid_date(const std::string& s) {
  if (s.size() != 10 || !digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' || !digits(s, 8, 2))
    return false;
  const int year = number(s, 0, 4), month = number(s, 5, 2), day = number(s, 8, 2);
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  static const int days[] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month >= 1 && month <= 12 && day >= 1 && day <= (month == 2 && leap ? 29 : days[month]);
}

// HH:MM:SS(.fraction)? then Z or +HH:MM / -HH:MM.
bool valid_time(const std::string& s) {
  if (!digits(s, 0, 2) || s.size() < 8 || s[2] != ':' || !digits(s, 3, 2) || s[5] != ':' || !digits(s, 6, 2))
    return false;
  if (number(s, 0, 2) > 23 || number(s, 3, 2) > 59 || number(s, 6, 2) > 59) return false;
  size_t i = 8;
  if (i < s.size() && s[i] == '.') {
    const size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  const std::string zone = s.substr(i);
  if (zone == "Z" || zone == "z") return true;
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && digits(zone, 1, 2) && zone[3] == ':' &&
         digits(zone, 4, 2) && number(zone, 1, 2) <= 23 && number(zone, 4, 2) <= 59;
}

// RFC 3339 appendix A's duration: "P" then dur-date / dur-time / dur-week, each element 1*DIGIT and
// its letter, every element after the first of its part taken only after the one before it
// (Y [M [D]], H [M [S]]).
bool valid_duration(const std::string& s) {
  size_t i = 0;
  // An element: digits and then `unit`.
  const auto element = [&](char unit) {
    size_t j = i;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j == i || j >= s.size() || s[j] != unit) return false;
    i = j + 1;
    return true;
  };
  // Elements of `units` in order: the first present, each later one only after the one before it.
  const auto chain = [&](const std::string& units) {
    for (size_t u = 0; u < units.size(); ++u)
      if (element(units[u])) {
        for (size_t v = u + 1; v < units.size() && element(units[v]);) ++v;
        return true;
      }
    return false;
  };
  if (s.empty() || s[i++] != 'P') return false;
  if (element('W')) return i == s.size();
  const bool date = chain("YMD");
  if (i < s.size() && s[i] == 'T') {
    ++i;
    if (!chain("HMS")) return false;
  } else if (!date) {
    return false;
  }
  return i == s.size();
}

bool valid_uuid(const std::string& s) {
  static const std::regex uuid("^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$");
  return std::regex_search(s, uuid);
}

// A host name (RFC 1123): labels of 1 to 63 letters, digits and hyphens, no hyphen first or last,
// 253 characters at most; `min_labels` of them at least.
bool valid_hostname(const std::string& s, size_t min_labels = 1) {
  if (s.empty() || s.size() > 253) return false;
  size_t labels = 0;
  for (size_t start = 0;; ++labels) {
    const size_t end = std::min(s.find('.', start), s.size());
    const std::string label = s.substr(start, end - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (char c : label)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    if (end == s.size()) return labels + 1 >= min_labels;
    start = end + 1;
  }
}

// local@domain (RFC 5321's dot-atoms): the local part's atoms of atext, one dot between them;
// the domain a host name of two labels or more.
bool valid_email(const std::string& s) {
  const size_t at = s.rfind('@');
  if (at == std::string::npos || at == 0 || at > 64) return false;
  const std::string local = s.substr(0, at);
  if (local.front() == '.' || local.back() == '.' || local.find("..") != std::string::npos) return false;
  for (char c : local)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string(".!#$%&'*+/=?^_`{|}~-").find(c) == std::string::npos)
      return false;
  return valid_hostname(s.substr(at + 1), 2);
}

bool valid_ip(const std::string& s, int family) {
  unsigned char address[16];
  return inet_pton(family, s.c_str(), address) == 1;
}

// scheme ":" and the rest without white space (RFC 3986's outline, as validators check it).
bool valid_uri(const std::string& s) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (size_t i = 0; i < colon; ++i)
    if (!std::isalnum(static_cast<unsigned char>(s[i])) && s[i] != '+' && s[i] != '-' && s[i] != '.') return false;
  for (char c : s)
    if (std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string type_of(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  return "number";
}

bool has_type(const json& v, const std::string& t) {
  if (t == "integer")
    return v.is_number() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>();
  if (t == "number") return v.is_number() && std::isfinite(v.get<double>());
  return type_of(v) == t;
}

}  // namespace

std::string schema_violation(const json& schema, const json& value, const json& root) {
  if (schema.is_boolean()) return schema.get<bool>() ? "" : "false schema";
  // OpenAPI 3.0's nullable, as ajv reads it: null is one more type (an enum or const still decides).
  const bool nullable_null = value.is_null() && schema.value("nullable", false) == true;
  if (nullable_null && !schema.contains("enum") && !schema.contains("const")) return "";
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    return schema_violation(root.at(json::json_pointer(ref.substr(1))), value, root);
  }
  if (schema.contains("type") && !nullable_null) {
    const json types = schema["type"].is_array() ? schema["type"] : json::array({schema["type"]});
    bool any = false;
    for (const json& t : types) any = any || has_type(value, t.get<std::string>());
    if (!any) return "type " + schema["type"].dump() + " vs " + value.dump();
  }
  if (schema.contains("const") && schema["const"] != value) return "const";
  if (schema.contains("enum")) {
    bool found = false;
    for (const json& v : schema["enum"]) found = found || v == value;
    if (!found) return "enum";
  }
  if (schema.contains("anyOf")) {
    bool any = false;
    for (const json& s : schema["anyOf"]) any = any || schema_violation(s, value, root).empty();
    if (!any) return "anyOf";
  }
  if (schema.contains("oneOf")) {
    int n = 0;
    for (const json& s : schema["oneOf"]) n += schema_violation(s, value, root).empty();
    if (n != 1) return "oneOf matched " + std::to_string(n);
  }
  if (schema.contains("allOf"))
    for (const json& s : schema["allOf"])
      if (const std::string why = schema_violation(s, value, root); !why.empty()) return "allOf: " + why;
  if (value.is_object()) {
    const auto n = static_cast<int64_t>(value.size());
    if (schema.contains("minProperties") && n < schema["minProperties"].get<int64_t>()) return "minProperties";
    if (schema.contains("maxProperties") && n > schema["maxProperties"].get<int64_t>()) return "maxProperties";
    if (schema.contains("propertyNames"))
      for (const auto& [key, v] : value.items())
        if (const std::string why = schema_violation(schema["propertyNames"], json(key), root); !why.empty())
          return "propertyNames " + key + ": " + why;
    const json props = schema.value("properties", json::object());
    if (schema.contains("required"))
      for (const json& name : schema["required"])
        if (!value.contains(name.get<std::string>())) return "required " + name.get<std::string>();
    for (const auto& [key, v] : value.items()) {
      if (props.contains(key)) {
        if (const std::string why = schema_violation(props[key], v, root); !why.empty()) return key + ": " + why;
      } else if (schema.contains("additionalProperties")) {
        if (const std::string why = schema_violation(schema["additionalProperties"], v, root); !why.empty())
          return "additional " + key + ": " + why;
      }
    }
  }
  if (value.is_array()) {
    const auto n = static_cast<int64_t>(value.size());
    if (schema.contains("minItems") && n < schema["minItems"].get<int64_t>()) return "minItems";
    if (schema.contains("maxItems") && n > schema["maxItems"].get<int64_t>()) return "maxItems";
    if (schema.value("uniqueItems", false))
      for (size_t i = 0; i < value.size(); ++i)
        for (size_t j = i + 1; j < value.size(); ++j)
          if (value[i] == value[j]) return concat("uniqueItems: items ", i, " and ", j, " are equal");
    // The first items by prefixItems (or draft 7's `items` list, then additionalItems), the rest by items.
    const bool old_tuple = schema.contains("items") && schema["items"].is_array();
    const json prefix = schema.contains("prefixItems") ? schema["prefixItems"] : old_tuple ? schema["items"] : json::array();
    const char* rest = old_tuple ? "additionalItems" : "items";
    for (size_t i = 0; i < value.size(); ++i) {
      const json* item_schema = i < prefix.size() ? &prefix[i] : schema.contains(rest) ? &schema[rest] : nullptr;
      if (!item_schema) continue;
      if (*item_schema == false) return concat("item ", i, " where no more may come");
      if (const std::string why = schema_violation(*item_schema, value[i], root); !why.empty())
        return concat("item ", i, ": ", why);
    }
  }
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    if (schema.contains("minLength") && code_points(s) < schema["minLength"].get<int64_t>()) return "minLength";
    if (schema.contains("maxLength") && code_points(s) > schema["maxLength"].get<int64_t>()) return "maxLength";
    if (schema.contains("pattern") && !std::regex_search(s, std::regex(schema["pattern"].get<std::string>())))
      return "pattern " + schema["pattern"].get<std::string>() + " vs " + value.dump();
    if (schema.contains("format")) {
      const std::string f = schema["format"];
      const size_t t = s.find_first_of("Tt");
      const bool ok = f == "date"       ? valid_date(s)
                      : f == "time"     ? valid_time(s)
                      : f == "uuid"     ? valid_uuid(s)
                      : f == "email"    ? valid_email(s)
                      : f == "hostname" ? valid_hostname(s)
                      : f == "ipv4"     ? valid_ip(s, AF_INET)
                      : f == "ipv6"     ? valid_ip(s, AF_INET6)
                      : f == "uri"      ? valid_uri(s)
                      : f == "duration" ? valid_duration(s)
                      : f == "date-time"
                          ? t != std::string::npos && valid_date(s.substr(0, t)) && valid_time(s.substr(t + 1))
                          : false;
      if (!ok) return "format " + f + " vs " + value.dump();
    }
  }
  if (value.is_number()) {
    const double x = value.get<double>();
    const auto bound = [&](const char* key) { return schema[key].get<double>(); };
    // Draft 4 writes exclusiveness as a flag on minimum / maximum.
    const auto flag = [&](const char* key) { return schema.contains(key) && schema[key] == true; };
    const auto number = [&](const char* key) { return schema.contains(key) && schema[key].is_number(); };
    if (schema.contains("minimum") && (flag("exclusiveMinimum") ? x <= bound("minimum") : x < bound("minimum")))
      return "minimum";
    if (schema.contains("maximum") && (flag("exclusiveMaximum") ? x >= bound("maximum") : x > bound("maximum")))
      return "maximum";
    if (number("exclusiveMinimum") && x <= bound("exclusiveMinimum")) return "exclusiveMinimum";
    if (number("exclusiveMaximum") && x >= bound("exclusiveMaximum")) return "exclusiveMaximum";
    if (schema.value("format", "") == "int32" && !(std::trunc(x) == x && x >= -0x1p31 && x < 0x1p31))
      return "format int32 vs " + value.dump();
    if (schema.value("format", "") == "int64" && std::trunc(x) != x) return "format int64 vs " + value.dump();
    if (schema.contains("multipleOf")) {  // as ajv and Python's jsonschema: x / m whole in doubles
      const double q = x / bound("multipleOf");
      if (q != std::trunc(q) || std::fabs(q) >= 1e21) return "multipleOf";
    }
  }
  return "";
}

bool accepts(grammar::Automaton& a, std::string_view text) {
  const grammar::Automaton::State s = a.next(a.start(), text);
  return s >= 0 && a.complete(s);
}

bool accepts(const std::shared_ptr<const grammar::Grammar>& g, std::string_view text) {
  grammar::Automaton a(g);
  return accepts(a, text);
}

std::optional<std::string> random_document(grammar::Automaton& a, Rng& rng, double stop, size_t max_bytes,
                                           std::string_view prefix) {
  std::string out(prefix);
  grammar::Automaton::State s = a.next(a.start(), prefix);
  if (s < 0) throw Error("random_document: the grammar refuses the prefix " + out);
  std::vector<std::pair<uint8_t, grammar::Automaton::State>> next;
  while (out.size() < max_bytes) {
    if (a.complete(s) && (!a.extensible(s) || rng.uniform() < stop)) return out;
    next.clear();
    for (int b = 0; b < 256; ++b)
      if (const auto t = a.next(s, static_cast<uint8_t>(b)); t >= 0) next.emplace_back(static_cast<uint8_t>(b), t);
    if (next.empty()) throw Error("random_document: a live state with no byte to go on with: " + out);
    const auto& [byte, to] = next[rng.below(next.size())];
    out += static_cast<char>(byte);
    s = to;
  }
  return std::nullopt;
}

}  // namespace difftx::testing
