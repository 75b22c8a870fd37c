#include "serve/generation_route.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "chat/strings.h"
#include "data/utf8.h"
#include "serve/choice_run.h"
#include "serve/background_responses.h"
#include "serve/client_connection.h"
#include "serve/content_tokens.h"
#include "serve/conversations.h"
#include "serve/ids.h"
#include "serve/messages_output.h"
#include "serve/messages_request.h"
#include "serve/prompt_scores.h"
#include "serve/reply_reader.h"
#include "serve/responses_output.h"
#include "serve/responses_request.h"
#include "serve/route_util.h"
#include "serve/sse.h"
#include "serve/stored_responses.h"

namespace difftx::serve {

using infer::FinishReason;

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// What a request asked through: completions, chat completions, OpenAI's Responses API or
// Anthropic's Messages API (chat completions answered as a Response, serve/responses_output.h, or
// a message, serve/messages_output.h).
enum class Api { completion, chat, responses, messages };

// What one HTTP request asks the engine for.
struct Job {
  Api api = Api::completion;
  GenerationParams params;
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::string> prompt_texts;  // completions: per prompt, its text (given, or its ids decoded)
  bool echo = false;                      // completions: the text and logprobs start with the prompt's
  std::vector<int32_t> extra_stop;
  ResponseHeader header;
  ReplyFormat reply;  // chat: how the reply is read back (reasoning, tool calls); completions: none
  nlohmann::json settings;  // responses: the request's settings the Response repeats
  nlohmann::ordered_json items;  // responses: the conversation's items before the output (ResponsesRequest)
  ResponseIncludes includes;     // responses: what the Response carries beyond the default
  std::string conversation;      // responses: the conversation it adds to, if any
  std::shared_ptr<void> conversation_hold;  // responses: held until the job ends (ConversationStore::hold)
  size_t input_from = 0;         // responses: where in `items` this request's input starts
};

// What a finished Response leaves: its input and output added to its conversation where it has one
// (a full conversation store: the 503 conversations_full, and nothing kept), the conversation then
// free for the next response, and the Response stored where its request asked. In that order, so
// that whoever sees the stored Response ended can go on in the conversation.
void record_response(ServerState& state, Job& job, const json& response) {
  if (!job.conversation.empty())
    add_to_conversation(state, job.conversation,
                        {job.items.begin() + static_cast<std::ptrdiff_t>(job.input_from), job.items.end()}, response);
  job.conversation_hold.reset();
  if (job.settings.value("store", false)) keep_response(state, job.header, job.items, response);
}

// One choice's progress.
struct ChoiceProgress {
  std::string text;
  std::vector<TokenInfo> tokens;
  std::vector<infer::PromptTokenLogprob> prompt_scores;  // with RequestOptions::prompt_logprobs
  FinishReason finish = FinishReason::none;
  std::string stop_string;  // the stop string that ended it, if one did
  int32_t stop_token = -1;  // the stop token that ended it, if one did
  std::string error;
  int64_t prompt_tokens = 0, generated_tokens = 0, cached_tokens = 0;
  int64_t offset = 0;  // text_offset of the next token
  bool echoed = false; // a stream: the prompt went out
  bool any_token = false;
  Clock::time_point last_token;
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// An event's token for logprobs; `silent`: the request's silent tokens (RequestOptions::silent_tokens).
TokenInfo token_info(const data::Tokenizer& tokenizer, const infer::TokenEvent& e, const std::vector<int32_t>& silent) {
  TokenInfo t;
  t.token = tokenizer.decode({&e.id, 1});
  t.logprob = e.logprob;
  t.silent = std::binary_search(silent.begin(), silent.end(), e.id);
  for (const infer::TokenLogprob& alt : e.top) t.top.emplace_back(tokenizer.decode({&alt.id, 1}), alt.logprob);
  return t;
}

const char* finish_name(FinishReason r) { return r == FinishReason::length ? "length" : "stop"; }

// Where a completion choice's text_offset starts: after its prompt (OpenAI's), or at 0 where the
// text starts with the prompt (echo, as vLLM counts it).
int64_t first_offset(const Job& job, size_t choice) {
  if (job.echo || job.prompt_texts.empty()) return 0;
  return static_cast<int64_t>(data::utf8_characters(job.prompt_texts[choice / job.params.n]));
}

// A tool call's id: the model's own where it wrote one (kimi_k2); else made, Mistral's 9 letters and
// digits (its templates insist on them), the others in OpenAI's shape.
std::string tool_call_id(const std::optional<ToolFormat>& format, const std::string& model_id) {
  if (!model_id.empty()) return model_id;
  const bool mistral = format == ToolFormat::mistral || format == ToolFormat::mistral_v11;
  return mistral ? random_alphanumerics(9) : "call_" + random_alphanumerics(24);
}

std::vector<ToolCallResult> with_ids(const std::vector<ToolCall>& calls, const std::optional<ToolFormat>& format) {
  std::vector<ToolCallResult> out;
  for (const ToolCall& c : calls) out.push_back({tool_call_id(format, c.id), c.name, c.arguments});
  return out;
}

// Folds an event into its choice: text, timings (metrics and the log line), final counts.
void apply(ServerState& state, const Job& job, const ChoiceRun& run, ChoiceProgress& p, const ChoiceEvent& ce) {
  const infer::TokenEvent& e = ce.event;
  if (e.id >= 0) {
    if (!p.any_token) {
      const double ttft = seconds(ce.at - run.submitted());
      state.metrics.observe_time_to_first_token(ttft);
      RequestRecord& record = current_record();
      if (record.first_token_seconds < 0) record.first_token_seconds = ttft;
    } else {
      state.metrics.observe_inter_token_latency(seconds(ce.at - p.last_token));
    }
    p.any_token = true;
    p.last_token = ce.at;
  }
  p.text += e.text;
  if (e.finish == FinishReason::none) return;
  p.finish = e.finish;
  p.stop_string = e.stop_string;
  p.stop_token = e.stop_token;
  p.error = e.error;
  p.prompt_tokens = e.prompt_tokens;
  p.cached_tokens = e.cached_tokens;
  p.generated_tokens = e.generated_tokens;
  const int64_t prompt = ce.choice % job.params.n == 0 ? e.prompt_tokens : 0;  // a prompt counts once
  state.metrics.count_tokens(prompt, e.generated_tokens);
  current_record().prompt_tokens += prompt;
  current_record().generated_tokens += e.generated_tokens;
}

Usage total_usage(const Job& job, const std::vector<ChoiceProgress>& progress) {
  Usage u;
  for (size_t i = 0; i < progress.size(); ++i) {
    if (i % job.params.n == 0) {  // a prompt counts once
      u.prompt_tokens += progress[i].prompt_tokens;
      u.cached_tokens += progress[i].cached_tokens;
    }
    u.completion_tokens += progress[i].generated_tokens;
  }
  return u;
}

// vLLM's stop_reason: the stop string, or the id of stop_token_ids, that ended the choice; null for
// the model's end of sequence (or the template's end of turn), which vLLM checks first, and for
// anything else.
json stop_reason(const ServedModel& m, const Job& job, const ChoiceProgress& p) {
  if (p.finish != FinishReason::stop) return nullptr;
  if (!p.stop_string.empty()) return p.stop_string;
  const auto has = [&](const std::vector<int32_t>& ids) {
    return std::find(ids.begin(), ids.end(), p.stop_token) != ids.end();
  };
  const bool end_of_sequence = !job.params.ignore_eos && (has(m.frame.stop) || has(job.extra_stop));
  if (p.stop_token >= 0 && has(job.params.stop_token_ids) && !end_of_sequence) return p.stop_token;
  return nullptr;
}

void check_outcome(const ChoiceProgress& p) {
  if (p.finish == FinishReason::error) throw ApiError(500, "generation failed: " + p.error, "", "generation_error");
  if (p.finish == FinishReason::cancelled)
    throw ApiError(503, "the request was cancelled: the server is shutting down", "", "cancelled");
}

// The whole reply once every choice has finished; a client that goes away before then (a timeout,
// a retry) cancels its choices, as a stream's does, and gets no reply (logged as 499, nginx's
// "client closed request").
void respond_once(ServerState& state, Job& job, ChoiceRun& run, const httplib::Request& req,
                  httplib::Response& res) {
  const data::Tokenizer& tokenizer = *state.model->tokenizer;
  std::vector<ChoiceProgress> progress(run.size());
  // The Responses API's logprobs are the content's: its tokens found as a stream finds them.
  const bool content_logprobs = job.api == Api::responses && job.includes.logprobs;
  std::vector<ReplyStream> readers(content_logprobs ? run.size() : 0, ReplyStream(job.reply));
  std::vector<ContentTokens> content(readers.size());
  const ClientConnection client;
  Clock::time_point checked = Clock::now();
  while (!run.finished()) {
    for (const ChoiceEvent& ce : run.take(500ms)) {
      ChoiceProgress& p = progress[ce.choice];
      std::vector<TokenInfo> token;
      if (job.params.logprobs && ce.event.id >= 0)
        token.push_back(token_info(tokenizer, ce.event, job.params.options.silent_tokens));
      if (!ce.event.prompt_logprobs.empty()) p.prompt_scores = ce.event.prompt_logprobs;
      const size_t before = p.text.size();
      apply(state, job, run, p, ce);
      if (content_logprobs) {
        const ReplyDelta delta =
            readers[ce.choice].push(std::string_view(p.text).substr(before), ce.event.finish != FinishReason::none);
        token = content[ce.choice].take(delta, std::move(token));
      }
      p.tokens.insert(p.tokens.end(), std::make_move_iterator(token.begin()), std::make_move_iterator(token.end()));
    }
    if (run.finished() || Clock::now() - checked < 500ms) continue;
    checked = Clock::now();
    if (client.gone()) {
      run.cancel();
      current_record().status = 499;
      res.status = 499;
      return;
    }
  }
  std::vector<ChoiceResult> choices;
  std::vector<int64_t> offsets;
  for (size_t i = 0; i < progress.size(); ++i) {
    check_outcome(progress[i]);
    ChoiceResult c{progress[i].text, finish_name(progress[i].finish), std::move(progress[i].tokens), {}, {}, nullptr,
                   stop_reason(*state.model, job, progress[i])};
    const std::vector<int32_t>& prompt = job.prompts[i / job.params.n];
    if (job.params.options.prompt_logprobs)
      c.prompt_logprobs = prompt_logprobs_json(tokenizer, prompt, progress[i].prompt_scores);
    if (job.echo) {
      c.text = job.prompt_texts[i / job.params.n] + c.text;
      if (job.params.logprobs) {
        std::vector<TokenInfo> echoed =
            prompt_token_infos(tokenizer, prompt, progress[i].prompt_scores, job.params.options.silent_tokens);
        c.tokens.insert(c.tokens.begin(), echoed.begin(), echoed.end());
      }
    }
    if (job.api != Api::completion) {
      const ReplyParts parts = read_reply(job.reply, progress[i].text);
      c.text = parts.content;
      if (parts.had_reasoning) c.reasoning = parts.reasoning;
      c.tool_calls = with_ids(parts.calls, job.reply.tools);
      if (!c.tool_calls.empty() && progress[i].finish == FinishReason::stop) c.finish_reason = "tool_calls";
    }
    choices.push_back(std::move(c));
    offsets.push_back(first_offset(job, i));
  }
  const Usage usage = total_usage(job, progress);
  if (job.api == Api::messages) {
    const MessageStop stop = message_stop(choices[0].finish_reason, progress[0].stop_string);
    return send_json(res, message_object(job.header, choices[0], stop, usage));
  }
  if (job.api == Api::responses) {
    const bool cut = progress[0].finish == FinishReason::length;
    const json response = response_object(job.header, job.settings, cut ? "incomplete" : "completed",
                                          output_items(job.header, choices[0], cut, job.includes), &usage);
    record_response(state, job, response);
    return send_json(res, response);
  }
  send_json(res, job.api == Api::chat ? chat_response(job.header, choices, usage, job.params.logprobs)
                                      : completion_response(job.header, choices, usage, job.params.logprobs, offsets));
}

// An event stream: the engine's events turned into chunks as they come, pings while waiting.
class Stream {
 public:
  Stream(ServerState& state, Job job, std::unique_ptr<ChoiceRun> run)
      : state_(state), job_(std::move(job)), run_(std::move(run)), progress_(run_->size()) {
    if (job_.api == Api::responses) events_.emplace(job_.header, job_.settings, job_.includes);
    if (job_.api == Api::messages) messages_.emplace(job_.header, static_cast<int64_t>(job_.prompts[0].size()));
    for (size_t i = 0; i < progress_.size(); ++i) {
      progress_[i].offset = first_offset(job_, i);
      replies_.emplace_back(job_.reply);
      contents_.emplace_back();
    }
  }

  // One round of httplib's content provider: false ends the connection (the client is gone).
  bool pump(httplib::DataSink& sink) {
    std::string out;
    if (!opened_ && job_.api == Api::chat)
      for (size_t i = 0; i < progress_.size(); ++i)
        out += sse_event(chat_chunk(job_.header, i, {{"role", "assistant"}, {"content", ""}}, "", nullptr));
    if (!opened_ && events_) out += events_->start();
    opened_ = true;
    const std::vector<ChoiceEvent> events = run_->take(250ms);
    if (messages_ && !message_started_ && (!events.empty() || run_->finished())) {
      out += messages_->start(events.empty() ? 0 : events.front().event.cached_tokens);
      message_started_ = true;
    }
    for (const ChoiceEvent& ce : events) out += chunks(ce);
    if (run_->finished()) {
      out += ending();
      job_.conversation_hold.reset();  // the conversation is free before the client reads the end
    }
    const auto now = Clock::now();
    if (out.empty() && now - last_write_ > 1s) out = kSsePing;
    if (!out.empty()) {
      if (!sink.write(out.data(), out.size())) return false;
      last_write_ = now;
    }
    if (run_->finished()) {
      sink.done();
      current_record().stream_open = false;
    }
    return true;
  }
  void cancel() { run_->cancel(); }
  // Cancelled as its client asked (a background response's cancel): its events end where they
  // are, without the error that a cancel by the server's shutdown ends them with.
  void cancel_as_asked() {
    cancelled_as_asked_ = true;
    run_->cancel();
  }
  // The Responses API's: whether the stream ended with its Response (recorded), and the Response it
  // stands at otherwise, ended with `status`.
  bool responded() const { return events_ && !events_->response().is_null() && !unrecorded_; }
  const Job& job() const { return job_; }
  json ended_response(const std::string& status) { return events_->ended_response(status); }

 private:
  std::string chunks(const ChoiceEvent& ce) {
    ChoiceProgress& p = progress_[ce.choice];
    const infer::TokenEvent& e = ce.event;
    const size_t before = p.text.size();
    apply(state_, job_, *run_, p, ce);
    std::string out;
    std::string text = p.text.substr(before);
    const bool ends = e.finish == FinishReason::stop || e.finish == FinishReason::length;
    const data::Tokenizer& tokenizer = *state_.model->tokenizer;
    const std::vector<int32_t>& silent = job_.params.options.silent_tokens;
    std::vector<TokenInfo> info;  // the tokens this chunk's logprobs show
    if (job_.echo && !p.echoed && (e.id >= 0 || ends)) {  // the first chunk starts with the prompt
      p.echoed = true;
      const size_t prompt = ce.choice / job_.params.n;
      text = job_.prompt_texts[prompt] + text;
      if (job_.params.logprobs) info = prompt_token_infos(tokenizer, job_.prompts[prompt], e.prompt_logprobs, silent);
    }
    if (job_.params.logprobs && e.id >= 0) info.push_back(token_info(tokenizer, e, silent));
    json logprobs = nullptr;
    if (!info.empty()) {
      logprobs = job_.api == Api::chat ? chat_logprobs(info) : completion_logprobs(info, p.offset);
      for (const TokenInfo& t : info) p.offset += text_characters(t);
    }
    const bool token = !info.empty();
    if (job_.api == Api::completion) {
      if (!text.empty() || token) out += sse_event(completion_chunk(job_.header, ce.choice, text, "", logprobs));
      if (ends)
        out += sse_event(completion_chunk(job_.header, ce.choice, "", finish_name(e.finish), nullptr,
                                          stop_reason(*state_.model, job_, p)));
      return out;
    }
    // Chat: the reply read back as it grows - reasoning, content, each tool call from its name on.
    ReplyStream& reply = replies_[ce.choice];
    const ReplyDelta delta = reply.push(text, e.finish != FinishReason::none);
    if (events_ || messages_) {  // the Responses or the Messages API: typed events
      std::vector<std::string> call_ids;
      for (const ToolCallDelta& d : delta.calls)
        call_ids.push_back(d.name.empty() ? "" : tool_call_id(job_.reply.tools, d.id));
      if (messages_) return messages_->push(delta, call_ids);
      return events_->push(delta, call_ids, contents_[ce.choice].take(delta, std::move(info)));
    }
    if (!delta.reasoning.empty())
      out += sse_event(chat_chunk(job_.header, ce.choice, {{"reasoning_content", delta.reasoning}}, "", nullptr));
    if (!delta.content.empty() || token)
      out += sse_event(chat_chunk(job_.header, ce.choice, {{"content", delta.content}}, "", logprobs));
    for (const ToolCallDelta& d : delta.calls) {
      const auto index = static_cast<int64_t>(d.index);
      const json call = d.name.empty()
                            ? json{{"index", index}, {"function", {{"arguments", d.arguments}}}}
                            : tool_call_json({tool_call_id(job_.reply.tools, d.id), d.name, d.arguments}, index);
      out += sse_event(chat_chunk(job_.header, ce.choice, {{"tool_calls", json::array({call})}}, "", nullptr));
    }
    if (ends) {
      const char* reason =
          reply.calls_sent() > 0 && e.finish == FinishReason::stop ? "tool_calls" : finish_name(e.finish);
      out += sse_event(chat_chunk(job_.header, ce.choice, json::object(), reason, nullptr,
                                  stop_reason(*state_.model, job_, p)));
    }
    return out;
  }

  std::string ending() {
    std::string out;
    for (const ChoiceProgress& p : progress_) try {
        check_outcome(p);
      } catch (const ApiError& e) {
        if (cancelled_as_asked_ && p.finish == FinishReason::cancelled) return "";
        current_record().status = e.status;
        if (messages_) return messages_->error(e);
        return events_ ? events_->error(error_body(e)) : sse_event(error_body(e)) + kSseDone;
      }
    if (messages_) {
      const ChoiceProgress& p = progress_[0];
      const bool calls = replies_[0].calls_sent() > 0 && p.finish == FinishReason::stop;
      return messages_->finish(message_stop(calls ? "tool_calls" : finish_name(p.finish), p.stop_string),
                               total_usage(job_, progress_));
    }
    if (events_) {
      out = events_->finish(progress_[0].finish == FinishReason::length, total_usage(job_, progress_));
      // Inside httplib's content provider, where an exception would end the process. A Response
      // that its conversation cannot take ends the stream with that error after all (a background
      // one is then stored failed with it).
      try {
        record_response(state_, job_, events_->response());
      } catch (const ApiError& e) {
        unrecorded_ = true;
        return out + events_->error(error_body(e));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "difftx serve: response %s not stored: %s\n", job_.header.id.c_str(), e.what());
      }
      return out;
    }
    if (job_.params.include_usage)
      out += sse_event(usage_chunk(job_.header, job_.api == Api::chat ? "chat.completion.chunk" : "text_completion",
                                   total_usage(job_, progress_)));
    return out + kSseDone;
  }

  ServerState& state_;
  Job job_;
  std::unique_ptr<ChoiceRun> run_;
  std::vector<ChoiceProgress> progress_;
  std::vector<ReplyStream> replies_;  // chat: per choice
  std::vector<ContentTokens> contents_;  // chat: per choice, the tokens of its content (Responses' logprobs)
  std::optional<ResponseEvents> events_;  // the Responses API's
  std::optional<MessageEvents> messages_;  // the Messages API's
  bool opened_ = false, cancelled_as_asked_ = false;
  bool unrecorded_ = false;  // the Response ended, but its conversation could not take it
  bool message_started_ = false;  // the Messages API's message_start is out (with the first event)
  Clock::time_point last_write_ = Clock::now();
};

// The prompt: the messages with the template's generation prompt, or without it
// (add_generation_prompt false), cut where the final message's text ends (continue_final_message),
// as transformers cuts it: after the last place the rendering holds that text, stripped as
// Python's str.strip strips.
std::string chat_prompt(const ServedModel& m, const ChatRequest& r) {
  std::string rendered = m.render_chat(r.messages, r.add_generation_prompt, r.template_kwargs);
  if (!r.continue_final_message) return rendered;
  const std::string last =
      chat::py_strip(content_text(r.messages.back().value("content", nlohmann::ordered_json(""))), std::nullopt, true, true);
  const size_t at = last.empty() ? std::string::npos : rendered.rfind(last);
  if (at == std::string::npos)
    throw ApiError(400, "continue_final_message: the rendered prompt does not hold the final message's text",
                   "continue_final_message", "invalid_value");
  return rendered.substr(0, at + last.size());
}

// The job's requests submitted to the engine (a refusal is the request's 4xx).
std::unique_ptr<ChoiceRun> submit(ServedModel& m, Job& job) {
  if (job.params.skip_special_tokens) job.params.options.silent_tokens = unread_special_tokens(*m.tokenizer, job.reply);
  auto run = std::make_unique<ChoiceRun>(*m.engine);
  run->submit(make_requests(m, job.prompts, job.params, job.extra_stop));
  return run;
}

void run_job(ServerState& state, Job job, const httplib::Request& req, httplib::Response& res) {
  auto run = submit(*state.model, job);
  if (!job.params.stream) return respond_once(state, job, *run, req, res);
  auto stream = std::make_shared<Stream>(state, std::move(job), std::move(run));
  current_record().stream_open = true;  // httplib runs the stream on this thread, and logs it when it stops
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream", [stream](size_t, httplib::DataSink& sink) { return stream->pump(sink); },
      [stream](bool) { stream->cancel(); });
}

// A background run's error, from the `error` event its stream ended with.
json run_error(const std::string& last_event) {
  const size_t data = last_event.find("data: ");
  const json e = data == std::string::npos ? json() : json::parse(last_event.substr(data + 6), nullptr, false);
  if (e.is_object() && e.value("type", "") == "error")
    return {{"code", e.value("code", json("server_error"))}, {"message", e.value("message", json("generation failed"))}};
  return {{"code", "server_error"}, {"message", "the run ended without a response"}};
}

// A background response's run, on its own thread: the stream's events into `b`; then, where it did
// not end in a Response of its own (cancelled, failed), the Response as it stood stored with that end.
void run_background(ServerState& state, Stream& stream, BackgroundRun& b) {
  const Job& job = stream.job();
  const ResponseHeader& header = job.header;
  bool cancelled = false;
  const auto store_end = [&](const std::string& error) {
    json ended = stream.ended_response(cancelled ? "cancelled" : "failed");
    if (!cancelled) ended["error"] = error.empty() ? run_error(b.last_event()) : json{{"code", "server_error"}, {"message", error}};
    keep_response(state, header, job.items, ended);
  };
  try {
    keep_response(state, header, job.items, response_object(header, job.settings, "in_progress", json::array(), nullptr),
                  /*running=*/true);
    bool done = false;
    httplib::DataSink sink;
    sink.write = [&b](const char* data, size_t n) {
      b.add({data, n});
      return true;
    };
    sink.is_writable = [] { return true; };
    sink.done = [&done] { done = true; };
    while (!done) {
      if (!cancelled && b.cancel_requested()) {
        stream.cancel_as_asked();
        cancelled = true;
      }
      stream.pump(sink);
    }
    if (!stream.responded()) store_end("");
  } catch (const std::exception& e) {  // on a thread of its own: nothing may escape
    std::fprintf(stderr, "difftx serve: background response %s: %s\n", header.id.c_str(), e.what());
    try {
      if (!stream.responded()) store_end(e.what());
    } catch (const std::exception&) {
    }
  }
  b.finish();
  state.in_flight.fetch_sub(1);
}

// A background response (serve/background_responses.h): its requests submitted here (a refusal is
// this request's 4xx), its Response stored as queued, then run on a thread of its own through the
// events a stream has, which the run keeps. This request gets the queued Response, or follows the
// events where it streams (leaving does not stop the run).
void run_in_background(ServerState& state, Job job, httplib::Response& res) {
  auto run = submit(*state.model, job);
  const json queued = response_object(job.header, job.settings, "queued", json::array(), nullptr);
  keep_response(state, job.header, job.items, queued, /*running=*/true);
  auto stream = std::make_shared<Stream>(state, std::move(job), std::move(run));
  const Job& started = stream->job();
  state.in_flight.fetch_add(1);  // the server's shutdown waits for it, as for a request
  std::shared_ptr<BackgroundRun> background;
  try {
    background = state.background.start(started.header.id,
                                        [&state, stream](BackgroundRun& b) { run_background(state, *stream, b); });
  } catch (...) {
    state.in_flight.fetch_sub(1);
    state.responses.erase(started.header.id);
    throw;
  }
  if (started.params.stream) return stream_background_events(background, -1, res);
  send_json(res, queued);
}

// A 400 where the model has no chat template to render messages; `messages_param`: the field the
// messages came from.
void require_template(const ServedModel& m, const char* messages_param) {
  if (!m.render_chat)
    throw ApiError(400,
                   "this model has no chat template (no chat_template in its tokenizer_config.json): start the "
                   "server with --chat-template FILE, or use /v1/completions",
                   messages_param, "no_chat_template");
}

// A chat request's job: its messages rendered through the template, the reply's constraint and how
// it is read back (reasoning, tool calls).
Job chat_job(ServedModel& m, ChatRequest& r, Api api, const char* messages_param) {
  require_template(m, messages_param);
  Job job;
  job.api = api;
  job.params = std::move(r.params);
  const std::string rendered = chat_prompt(m, r);
  bool reasoning_open = false;
  if (m.output.reasoning) {
    std::string conversation;  // "" where the template refuses to end without the generation prompt
    try {
      conversation = m.render_chat(r.messages, false, r.template_kwargs);
    } catch (const ApiError&) {
    }
    reasoning_open = prompt_opens_reasoning(rendered, conversation, *m.output.reasoning);
    job.params.options.reasoning = infer::ReasoningBlock{*m.output.reasoning, reasoning_open};  // no stop in it
  }
  job.params.options.constraint = m.constraints->get(m.output, r.output, reasoning_open);
  job.reply = {m.output.reasoning, reasoning_open,
               r.output.parses_tool_calls() ? m.output.tool_format : std::optional<ToolFormat>(), r.output.functions};
  job.prompts.push_back(encode_chat_prompt(m, rendered));
  truncate_prompt(job.prompts.back(), job.params, m.limits.context);
  job.extra_stop = m.chat_stop;
  const char* prefix = api == Api::responses ? "resp_" : api == Api::messages ? "msg_" : "chatcmpl-";
  job.header = {unique_id(prefix), static_cast<int64_t>(std::time(nullptr)), m.limits.model_name};
  return job;
}

// Whether a job's prompt leaves room for what it may generate.
bool fits(const Job& job, int64_t context) {
  return !context_refusal(static_cast<int64_t>(job.prompts[0].size()), job.params, context);
}

// The Responses API's truncation "auto": where the conversation does not fit the context, its
// oldest items go, as OpenAI drops them from the beginning: whole messages after the leading system
// messages (the instructions), so that it starts at a user message (templates that want turns to
// alternate take it) or, where even the last user message on does not fit, at a later message
// that is not a tool result (a call's results go with it); the fewest that make it fit, found by
// bisection (each try renders the template). Where nothing fits, the job from the last message on
// (whose run is then the usual 400).
Job fitted_chat_job(ServedModel& m, const ChatRequest& r) {
  size_t lead = 0;
  while (lead < r.messages.size() && (r.messages[lead]["role"] == "system" || r.messages[lead]["role"] == "developer"))
    ++lead;
  const auto from = [&](size_t start) {  // the job without the messages in [lead, start)
    ChatRequest cut = r;
    cut.messages.erase(cut.messages.begin() + static_cast<std::ptrdiff_t>(lead),
                       cut.messages.begin() + static_cast<std::ptrdiff_t>(start));
    return chat_job(m, cut, Api::responses, "input");
  };
  // The earliest start in `starts` (ascending, each later one shorter) that fits; nullopt where none
  // does. What starts earlier than starts[0] is known not to.
  const auto first_fitting = [&](const std::vector<size_t>& starts) -> std::optional<Job> {
    if (starts.empty()) return std::nullopt;
    Job best = from(starts.back());
    if (!fits(best, m.limits.context)) return std::nullopt;
    int64_t short_of = -1, fitting = static_cast<int64_t>(starts.size()) - 1;
    while (fitting - short_of > 1) {
      const int64_t mid = short_of + (fitting - short_of) / 2;
      Job tried = from(starts[static_cast<size_t>(mid)]);
      if (fits(tried, m.limits.context)) {
        fitting = mid;
        best = std::move(tried);
      } else {
        short_of = mid;
      }
    }
    return best;
  };
  Job whole = from(lead);
  if (fits(whole, m.limits.context)) return whole;
  std::vector<size_t> users, others;  // where it may start: at a user message; past the last, any but a tool result
  for (size_t i = lead + 1; i < r.messages.size(); ++i)
    if (r.messages[i]["role"] == "user") users.push_back(i);
  for (size_t i = std::max(lead + 1, users.empty() ? 0 : users.back() + 1); i < r.messages.size(); ++i)
    if (r.messages[i]["role"] != "tool") others.push_back(i);
  if (auto job = first_fitting(users)) return std::move(*job);
  if (auto job = first_fitting(others)) return std::move(*job);
  return others.empty() ? (users.empty() ? std::move(whole) : from(users.back())) : from(others.back());
}

}  // namespace

void handle_completions(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    ServedModel& m = require_model(state);
    CompletionRequest r = parse_completion_request(parse_body(req.body), parse_ordered_body(req.body), m.limits);
    Job job;
    job.api = Api::completion;
    job.params = std::move(r.params);
    job.params.options.constraint = m.constraints->get(m.output, r.output, false);
    job.echo = r.echo;
    for (const Prompt& p : r.prompts) {
      job.prompts.push_back(p.text ? encode_text_prompt(m, *p.text) : p.ids);
      const bool cut = truncate_prompt(job.prompts.back(), job.params, m.limits.context);
      job.prompt_texts.push_back(p.text && !cut ? *p.text : m.tokenizer->decode(job.prompts.back()));
    }
    job.header = {unique_id("cmpl-"), static_cast<int64_t>(std::time(nullptr)), m.limits.model_name};
    run_job(state, std::move(job), req, res);
  });
}

void handle_chat_completions(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    ServedModel& m = require_model(state);
    ChatRequest r = parse_chat_request(parse_body(req.body), parse_ordered_body(req.body), m.limits);
    run_job(state, chat_job(m, r, Api::chat, "messages"), req, res);
  });
}

void handle_responses(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    ServedModel& m = require_model(state);
    const json body = parse_body(req.body);
    nlohmann::ordered_json history = nlohmann::ordered_json::array();
    if (const auto previous = previous_response_id(body)) {
      StoredResponse stored = stored_response(state, *previous);
      if (const std::string status = stored.response.value("status", ""); status == "queued" || status == "in_progress")
        bad_param("previous_response_id", "response '" + *previous + "' is " + status + ": continue it once it has ended");
      history = std::move(stored.items);
    }
    const std::optional<std::string> conversation = conversation_id(body);
    ConversationTurn turn;
    if (conversation) turn = begin_turn(state, *conversation);
    for (nlohmann::ordered_json& item : turn.items) history.push_back(std::move(item));
    const size_t input_from = history.size();
    ResponsesRequest r =
        parse_responses_request(body, parse_ordered_body(req.body), m.limits, history, state.responses.enabled());
    try {
      Job job = r.truncate_auto ? fitted_chat_job(m, r.chat) : chat_job(m, r.chat, Api::responses, "input");
      job.settings = std::move(r.settings);
      job.items = std::move(r.items);
      job.includes = r.includes;
      job.conversation = conversation.value_or("");
      job.conversation_hold = std::move(turn.hold);
      job.input_from = input_from;
      if (r.background) return run_in_background(state, std::move(job), res);
      run_job(state, std::move(job), req, res);
    } catch (const ApiError& e) {  // the chat path's and the engine's refusals name their own fields
      throw ApiError(e.status, e.message, responses_param(e.param), e.code);
    }
  });
}

void handle_messages(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(
      res,
      [&] {
        ServedModel& m = require_model(state);
        ChatRequest r = parse_messages_request(parse_body(req.body), parse_ordered_body(req.body), m.limits);
        run_job(state, chat_job(m, r, Api::messages, "messages"), req, res);
      },
      ErrorShape::anthropic);
}

void handle_count_tokens(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(
      res,
      [&] {
        ServedModel& m = require_model(state);
        const ChatRequest r =
            parse_messages_request(parse_body(req.body), parse_ordered_body(req.body), m.limits, /*counting=*/true);
        require_template(m, "messages");
        const auto tokens = static_cast<int64_t>(encode_chat_prompt(m, chat_prompt(m, r)).size());
        send_json(res, {{"input_tokens", tokens}});
      },
      ErrorShape::anthropic);
}

}  // namespace difftx::serve
