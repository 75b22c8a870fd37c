#include "serve/routes.h"

#include "serve/chat_page.h"
#include "serve/route_util.h"

namespace difftx::serve {

using nlohmann::json;

void handle_health(ServerState& state, const httplib::Request&, httplib::Response& res) {
  if (state.draining) return send_json(res, {{"status", "shutting down"}}, 503);
  if (!state.ready.load(std::memory_order_acquire)) return send_json(res, {{"status", "loading"}}, 503);
  send_json(res, {{"status", "ok"}});
}

namespace {

json models_with_meta(const ServerState& state, const ServedModel& m) {
  json list = models_list(m.limits.model_name, state.created);
  list["data"][0]["meta"] = {{"context", m.limits.context},
                             {"vocab_size", m.limits.vocab_size},
                             {"chat_template", static_cast<bool>(m.render_chat)}};
  return list;
}

}  // namespace

void handle_models(ServerState& state, const httplib::Request&, httplib::Response& res) {
  answer(res, [&] { send_json(res, models_with_meta(state, require_model(state))); });
}

void handle_model(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const ServedModel& m = require_model(state);
    const std::string id = req.matches.size() > 1 ? std::string(req.matches[1]) : std::string();
    if (id != m.limits.model_name)
      throw ApiError(404, "the model '" + id + "' does not exist; this server serves '" + m.limits.model_name + "'",
                     "model", "model_not_found");
    send_json(res, models_with_meta(state, m)["data"][0]);
  });
}

void handle_tokenize(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const ServedModel& m = require_model(state);
    const TokenizeRequest r = parse_tokenize_request(parse_body(req.body));
    std::vector<int32_t> ids = encode_text_prompt(m, r.text);
    if (!r.add_special) ids.erase(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(m.frame.prefix.size()));
    send_json(res, {{"tokens", ids}});
  });
}

void handle_detokenize(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const ServedModel& m = require_model(state);
    const std::vector<int32_t> ids = parse_detokenize_request(parse_body(req.body), m.tokenizer->vocab_size());
    send_json(res, {{"content", m.tokenizer->decode(ids)}});
  });
}

void handle_apply_template(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const ServedModel& m = require_model(state);
    const ChatRequest r = parse_apply_template_request(parse_body(req.body), parse_ordered_body(req.body));
    if (!m.render_chat)
      throw ApiError(400, "this model has no chat template: start the server with --chat-template FILE", "messages",
                     "no_chat_template");
    send_json(res, {{"prompt", m.render_chat(r.messages, true, r.template_kwargs)}});
  });
}

void handle_metrics(ServerState& state, const httplib::Request&, httplib::Response& res) {
  const bool ready = state.ready.load(std::memory_order_acquire);
  const infer::EngineStats stats = ready ? state.model->engine->stats() : infer::EngineStats{};
  res.set_content(state.metrics.render(ready ? &stats : nullptr), "text/plain; version=0.0.4");
}

void handle_page(ServerState&, const httplib::Request&, httplib::Response& res) {
  res.set_content(kChatPage, "text/html; charset=utf-8");
}

}  // namespace difftx::serve
