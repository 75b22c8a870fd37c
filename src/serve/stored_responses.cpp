#include "serve/stored_responses.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "serve/item_pages.h"
#include "serve/responses_output.h"
#include "serve/route_util.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ApiError not_found(const std::string& id) {
  return ApiError(404, "Response with id '" + id + "' not found.", "", "not_found");
}

// An input item's id: its kind's prefix, as the output items' ids are made.
std::string input_item_id(const ResponseHeader& h, const ordered_json& item, size_t index) {
  return item_id(h, item_prefix(item), "in" + std::to_string(index));
}

}  // namespace

void keep_response(ServerState& state, const ResponseHeader& header, const ordered_json& items, const json& response,
                   bool running) {
  ordered_json conversation = items;
  for (size_t i = 0; i < conversation.size(); ++i)
    if (conversation[i].is_object() && !conversation[i].contains("id"))
      conversation[i]["id"] = input_item_id(header, conversation[i], i);
  for (const json& item : response["output"]) conversation.push_back(ordered_json(item));
  state.responses.put(header.id, {response, std::move(conversation)}, running);
}

StoredResponse stored_response(ServerState& state, const std::string& id) {
  auto found = state.responses.get(id);
  if (!found) throw not_found(id);
  return std::move(*found);
}

void handle_response_get(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const std::string id = req.matches[1];
    // Extra content is an include's, which no stored response keeps apart.
    for (const auto& [key, value] : req.params)  // include=..., or include[]=... as clients write a list
      if (key == "include" || key == "include[]") unsupported("include", "'include'");
    if (req.get_param_value("stream") != "true") return send_json(res, stored_response(state, id).response);
    // A background response's events, from past starting_after.
    const std::shared_ptr<BackgroundRun> run = state.background.find(id);
    if (!run) {
      stored_response(state, id);  // 404 where there is no such response
      bad_param("stream", "response '" + id + "' has no events to stream: it did not run in the background, or its "
                          "events were dropped for room");
    }
    int64_t after = -1;
    if (req.has_param("starting_after")) {
      const json number = json::parse(req.get_param_value("starting_after"), nullptr, false);
      if (!number.is_number_integer() || number.get<int64_t>() < 0 ||
          number.get<int64_t>() == std::numeric_limits<int64_t>::max())
        bad_param("starting_after", "'starting_after' must be a sequence number (an integer >= 0)");
      after = number.get<int64_t>();
    }
    stream_background_events(run, after, res);
  });
}

void handle_response_cancel(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const std::string id = req.matches[1];
    const std::shared_ptr<BackgroundRun> run = state.background.find(id);
    if (!run) {  // ended, its events since dropped for room; or never a background response
      const StoredResponse stored = stored_response(state, id);  // 404 where there is no such response
      if (stored.response.value("background", false)) return send_json(res, stored.response);
      bad_param("response_id", "response '" + id + "' did not run in the background: only a background response "
                               "can be cancelled");
    }
    run->request_cancel();
    run->wait_finished();  // the run looks for the cancel between rounds of at most a quarter second
    send_json(res, stored_response(state, id).response);
  });
}

void handle_response_delete(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const std::string id = req.matches[1];
    if (const std::shared_ptr<BackgroundRun> run = state.background.find(id)) {  // stopped, then forgotten
      run->request_cancel();
      run->wait_finished();
      state.background.forget(id);
    }
    if (!state.responses.erase(id)) throw not_found(id);
    send_json(res, {{"id", id}, {"object", "response"}, {"deleted", true}});
  });
}

void handle_response_input_items(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const StoredResponse stored = stored_response(state, req.matches[1]);
    const size_t inputs = stored.items.size() - stored.response["output"].size();  // the items before the output
    send_json(res, item_page({stored.items.begin(), stored.items.begin() + static_cast<std::ptrdiff_t>(inputs)}, req));
  });
}

}  // namespace difftx::serve
