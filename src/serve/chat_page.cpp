#include "serve/chat_page.h"

namespace difftx::serve {

const char* const kChatPage = R"PAGE(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>difftx</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f6f6f4; color: #222; }
  header { display: flex; flex-wrap: wrap; gap: .6em 1em; align-items: center; padding: .6em 1em; background: #fff; border-bottom: 1px solid #ddd; }
  header h1 { font-size: 1.05em; margin: 0; }
  header label, header span { white-space: nowrap; }
  header .grow { flex: 1; }
  #log { max-width: 52em; margin: 0 auto; padding: 1em; }
  .msg { white-space: pre-wrap; padding: .6em .8em; margin: .5em 0; border-radius: 6px; background: #fff; border: 1px solid #e2e2e2; }
  .msg.user { background: #e8f0fb; }
  .msg.error { background: #fbe9e9; }
  form { display: flex; gap: .5em; max-width: 52em; margin: 0 auto; padding: 0 1em 1em; }
  textarea { flex: 1; font: inherit; min-height: 3.2em; padding: .4em; }
  button { font: inherit; padding: .4em 1em; }
  #rate { color: #666; font-variant-numeric: tabular-nums; }
</style>
</head>
<body>
<header>
  <h1>difftx</h1><span id="model">loading...</span><span class="grow"></span>
  <label><input type="radio" name="mode" value="chat" id="mode-chat"> chat</label>
  <label><input type="radio" name="mode" value="completion" id="mode-completion"> completion</label>
  <label>max tokens <input id="max-tokens" type="number" value="256" min="1" style="width: 5em"></label>
  <label>temperature <input id="temperature" type="number" value="0.7" min="0" max="2" step="0.1" style="width: 4em"></label>
  <label>API key <input id="key" type="password" style="width: 8em"></label>
  <span id="rate"></span><span id="status">idle</span>
</header>
<div id="log"></div>
<form id="form">
  <textarea id="input" placeholder="Write a message (Enter sends, Shift+Enter: new line)"></textarea>
  <button id="send" type="submit">Send</button><button id="stop" type="button" disabled>Stop</button>
</form>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let history = [];   // chat messages so far
let model = null;
let controller = null;

$("key").value = localStorage.getItem("difftx-key") || "";
$("key").onchange = () => { localStorage.setItem("difftx-key", $("key").value); loadModel(); };

function headers() {
  const h = { "Content-Type": "application/json" };
  if ($("key").value) h["Authorization"] = "Bearer " + $("key").value;
  return h;
}

function add(kind, text) {
  const div = document.createElement("div");
  div.className = "msg " + kind;
  div.textContent = text;
  $("log").appendChild(div);
  div.scrollIntoView({ block: "end" });
  return div;
}

function mode() { return $("mode-chat").checked ? "chat" : "completion"; }

// Reads a server-sent event stream, calling onData with each `data:` payload.
async function readEvents(response, onData) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split("\n"))
        if (line.startsWith("data: ")) onData(line.slice(6));
    }
  }
}

async function send(text) {
  if (!text || controller) return;
  const chat = mode() === "chat";
  add("user", text);
  const out = add("assistant", chat ? "" : text);
  const body = { model: model, stream: true, stream_options: { include_usage: true },
                 max_tokens: Number($("max-tokens").value), temperature: Number($("temperature").value) };
  if (chat) { history.push({ role: "user", content: text }); body.messages = history; } else { body.prompt = text; }
  controller = new AbortController();
  $("send").disabled = true; $("stop").disabled = false; $("status").textContent = "generating";
  let reply = "", tokens = 0, pieces = 0, first = 0;  // pieces: chunks with text, about one token each
  const start = performance.now();
  try {
    const response = await fetch(chat ? "/v1/chat/completions" : "/v1/completions",
                                 { method: "POST", headers: headers(), body: JSON.stringify(body), signal: controller.signal });
    if (!response.ok) {
      const error = await response.json().catch(() => ({}));
      throw new Error((error.error && error.error.message) || ("HTTP " + response.status));
    }
    await readEvents(response, (data) => {
      if (data === "[DONE]") return;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message);
      if (chunk.usage) tokens = chunk.usage.completion_tokens;
      if (!chunk.choices || !chunk.choices.length) return;
      const piece = chat ? (chunk.choices[0].delta.content || "") : chunk.choices[0].text;
      if (!piece) return;
      if (!first) first = performance.now();
      reply += piece;
      out.textContent = (chat ? "" : text) + reply;
      const seconds = (performance.now() - first) / 1000;
      out.dataset.chunks = ++pieces;
      if (pieces > 1 && seconds > 0) $("rate").textContent = (pieces / seconds).toFixed(1) + " tok/s";
    });
    const seconds = (performance.now() - (first || start)) / 1000;
    tokens = tokens || pieces;
    $("rate").textContent = tokens + " tokens, " + (seconds > 0 ? (tokens / seconds).toFixed(1) : "-") + " tok/s";
    if (chat) history.push({ role: "assistant", content: reply });
    $("status").textContent = "done";
  } catch (e) {
    if (e.name === "AbortError") { $("status").textContent = "stopped"; }
    else { add("error", String(e.message || e)); $("status").textContent = "error"; }
    if (chat) history.pop();
  } finally {
    controller = null;
    $("send").disabled = false; $("stop").disabled = true;
  }
}

$("form").onsubmit = (e) => { e.preventDefault(); const t = $("input").value; $("input").value = ""; send(t); };
$("input").onkeydown = (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("form").requestSubmit(); } };
$("stop").onclick = () => controller && controller.abort();
for (const id of ["mode-chat", "mode-completion"]) $(id).onchange = () => { history = []; };

// The model's name, context and whether it has a chat template (chat mode needs one).
async function loadModel() {
  try {
    const response = await fetch("/v1/models", { headers: headers() });
    const list = await response.json();
    if (!response.ok) throw Object.assign(new Error(list.error ? list.error.message : "HTTP " + response.status),
                                          { status: response.status });
    const info = list.data[0];
    model = info.id;
    $("model").textContent = info.id + " (context " + info.meta.context + ")";
    const hasTemplate = info.meta.chat_template;
    $("mode-chat").disabled = !hasTemplate;
    $(params.get("mode") === "chat" && hasTemplate ? "mode-chat" :
      params.get("mode") === "completion" || !hasTemplate ? "mode-completion" : "mode-chat").checked = true;
  } catch (e) {
    $("model").textContent = "not ready: " + e.message;
    $("mode-completion").checked = true;
    if (e.status === 503) setTimeout(loadModel, 2000);  // still loading
  }
}

(async () => {
  await loadModel();
  if (params.get("max_tokens")) $("max-tokens").value = params.get("max_tokens");
  if (params.get("send")) await send(params.get("send"));
})();
</script>
</body>
</html>
)PAGE";

}  // namespace difftx::serve
