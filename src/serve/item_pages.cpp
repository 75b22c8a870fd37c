#include "serve/item_pages.h"

#include <algorithm>
#include <string>

#include "serve/api_error.h"
#include "serve/json_fields.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The query's parameters as JSON fields for the checks: limit as a number where it reads as one.
json query_fields(const httplib::Request& req) {
  json query = json::object();
  for (const char* key : {"order", "after"})
    if (req.has_param(key)) query[key] = req.get_param_value(key);
  if (req.has_param("limit")) {
    const std::string v = req.get_param_value("limit");
    const json number = json::parse(v, nullptr, false);
    query["limit"] = number.is_number() ? number : json(v);
  }
  return query;
}

}  // namespace

json item_page(std::vector<ordered_json> items, const httplib::Request& req) {
  const json query = query_fields(req);
  const Fields f(query);
  const int64_t limit = f.integer("limit", 1, 100).value_or(20);
  const std::string order = f.string("order").value_or("desc");
  if (order != "asc" && order != "desc") bad_param("order", "'order' must be asc or desc");
  if (order == "desc") std::reverse(items.begin(), items.end());
  size_t begin = 0;
  if (const auto after = f.string("after")) {
    while (begin < items.size() && !(items[begin].contains("id") && items[begin]["id"] == *after)) ++begin;
    if (begin == items.size()) bad_param("after", "no item here has the id '" + *after + "'");
    ++begin;
  }
  const size_t end = std::min(items.size(), begin + static_cast<size_t>(limit));
  return item_list({items.begin() + static_cast<std::ptrdiff_t>(begin), items.begin() + static_cast<std::ptrdiff_t>(end)},
                   end < items.size());
}

json item_list(const std::vector<ordered_json>& data, bool has_more) {
  return {{"object", "list"},
          {"data", data},
          {"first_id", data.empty() ? json(nullptr) : json(data.front()["id"])},
          {"last_id", data.empty() ? json(nullptr) : json(data.back()["id"])},
          {"has_more", has_more}};
}

}  // namespace difftx::serve
