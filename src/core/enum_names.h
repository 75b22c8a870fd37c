// An enum's values and their names in one table, read both ways: a value's name (name_of: the
// first entry's for a value the table lacks; find_name: null) and the value of a name.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace difftx {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// A value's name; null for a value the table lacks.
template <typename E, size_t N>
const char* find_name(const EnumName<E> (&names)[N], E value) {
  for (const EnumName<E>& n : names)
    if (n.value == value) return n.name;
  return nullptr;
}

template <typename E, size_t N>
const char* name_of(const EnumName<E> (&names)[N], E value) {
  const char* name = find_name(names, value);
  return name ? name : names[0].name;
}

template <typename E, size_t N>
std::optional<E> value_named(const EnumName<E> (&names)[N], std::string_view name) {
  for (const EnumName<E>& n : names)
    if (name == n.name) return n.value;
  return std::nullopt;
}

}  // namespace difftx
