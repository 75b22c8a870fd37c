// A page of items, as the Responses API lists a response's input items and the Conversations API a
// conversation's: the query's `limit` (1-100, default 20), `order` (asc, or desc, the default: the
// last first) and `after` (an item's id: the page starts past it; one no item has is a 400), as
// {"object": "list", "data", "first_id", "last_id", "has_more"}.
#pragma once
#include <httplib.h>

#include <vector>

#include <nlohmann/json.hpp>

namespace difftx::serve {

nlohmann::json item_page(std::vector<nlohmann::ordered_json> items, const httplib::Request& req);
// Items as such a list, whole or a page of more (has_more).
nlohmann::json item_list(const std::vector<nlohmann::ordered_json>& data, bool has_more);

}  // namespace difftx::serve
