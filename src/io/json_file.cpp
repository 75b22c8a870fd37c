#include "io/json_file.h"

#include <algorithm>
#include <set>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"

namespace difftx::io {

std::string json_error_text(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const auto tag_end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && tag_end != std::string::npos ? what.substr(tag_end + 2)
                                                                                  : what;
}

std::string json_value_for_message(const nlohmann::json& value) {
  // A container is shown whole only when small and flat: dump() recurses per level.
  const bool flat = value.size() <= 4 && std::none_of(value.begin(), value.end(), [](const nlohmann::json& v) {
                      return v.is_structured();
                    });
  if (value.is_array() && !flat) return concat("an array of ", value.size(), " elements");
  if (value.is_object() && !flat) return concat("an object with ", value.size(), " keys");
  std::string text = value.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

namespace {

// Watches the parser's events: the keys seen in each open object (arrays hold an empty set),
// whose count is the nesting depth.
class StructureGuard {
 public:
  StructureGuard(const std::string& source, int64_t max_keys) : source_(source), max_keys_(max_keys) {}

  void on(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      DIFFTX_CHECK(open_.size() < static_cast<size_t>(kMaxJsonDepth), source_, ": JSON nested deeper than ",
                   kMaxJsonDepth, " levels");
      open_.emplace_back();
    } else if (event == E::object_end || event == E::array_end) {
      open_.pop_back();
    } else if (event == E::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      DIFFTX_CHECK(max_keys_ <= 0 || static_cast<int64_t>(open_.back().size()) < max_keys_, source_,
                   " has an object with more than ", max_keys_, " keys");
      if (!open_.back().insert(key).second) {
        std::string shown = json_value_for_message(nlohmann::json(key));  // quoted, escaped, shortened
        shown = shown.substr(1, shown.back() == '"' ? shown.size() - 2 : std::string::npos);
        fail(source_, " names '", shown, "' twice in one object (JSON keys must be unique)");
      }
    }
  }

 private:
  const std::string& source_;
  const int64_t max_keys_;
  std::vector<std::set<std::string>> open_;
};

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& source,
                               const nlohmann::json::parser_callback_t& callback, int64_t max_keys) {
  const auto nul = text.find('\0');
  DIFFTX_CHECK(nul == std::string_view::npos, source, " has a NUL byte at offset ", nul, " (JSON allows none)");
  StructureGuard guard(source, max_keys);
  const nlohmann::json::parser_callback_t watch = [&](int depth, nlohmann::json::parse_event_t event,
                                                      nlohmann::json& parsed) {
    guard.on(event, parsed);
    return callback ? callback(depth, event, parsed) : true;
  };
  try {
    return nlohmann::json::parse(text, watch);
  } catch (const nlohmann::json::parse_error& e) {
    fail(source, ": invalid JSON: ", json_error_text(e));
  } catch (const nlohmann::json::out_of_range& e) {  // a number beyond double's range (1e999)
    fail(source, ": invalid JSON: ", json_error_text(e));
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_whole_file(path), path.string());
}

std::optional<nlohmann::json> read_json_object_if_present(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path)) return std::nullopt;
  nlohmann::json j = read_json_file(path);
  DIFFTX_CHECK(j.is_object(), path.string(), ": expected a JSON object");
  return j;
}

void write_json_file(const std::filesystem::path& path, const nlohmann::json& value) {
  std::string text;
  try {
    text = value.dump(2) + "\n";
  } catch (const nlohmann::json::type_error& e) {  // a string that is not valid UTF-8
    fail("cannot write '", path.string(), "': ", json_error_text(e));
  }
  write_file_atomically(path, text);
}

}  // namespace difftx::io
