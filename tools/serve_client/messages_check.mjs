// Anthropic's official client (@anthropic-ai/sdk) driving `difftx serve`'s Messages API
// (POST /v1/messages): a message whole and streamed (the stream's final message the same, same
// seed), stop_sequences and the stop_sequence that ended the text, a prefill continued, output_config.format's JSON
// schema (the text validated by ajv), custom tools with tool_choice
// any / tool / disable_parallel_tool_use (every input validated by ajv against its input_schema), a
// conversation continued with tool_use and tool_result blocks, count_tokens against the usage,
// errors in Anthropic's shape; with a template that opens <think>, the thinking as a thinking
// block before the text, whole and streamed.
//   node messages_check.mjs SERVER_URL tools       (a template with <tool_call> blocks)
//   node messages_check.mjs SERVER_URL reasoning   (a template that opens <think> in the prompt)
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import Ajv from "ajv";

const [baseURL, mode] = process.argv.slice(2);
const client = new Anthropic({ baseURL, apiKey: "none", maxRetries: 0 });
const model = (await client.models.list()).data[0].id;
assert.equal((await client.models.retrieve(model)).type, "model");
const ajv = new Ajv({ strict: true, allErrors: true });
const user = (content) => ({ role: "user", content });
const textOf = (message) => message.content.filter((b) => b.type === "text").map((b) => b.text).join("");

// The stream's events: message_start first, message_stop last, each block started, its deltas,
// stopped, one after another; the final message as the SDK accumulates it.
async function streamed(request) {
  const stream = client.messages.stream(request);
  const types = [];
  let open = null;
  for await (const e of stream) {
    types.push(e.type);
    if (e.type === "content_block_start") {
      assert.equal(open, null, "a block started inside another");
      open = e.index;
    } else if (e.type === "content_block_delta") {
      assert.equal(e.index, open, "a delta outside its block");
    } else if (e.type === "content_block_stop") {
      assert.equal(e.index, open);
      open = null;
    }
  }
  assert.equal(types[0], "message_start");
  assert.deepEqual(types.slice(-2), ["message_delta", "message_stop"]);
  return stream.finalMessage();
}

async function expect400(request, what) {
  try {
    await client.messages.create(request);
  } catch (e) {
    assert.ok(e instanceof Anthropic.BadRequestError, `${what}: not a 400 but ${e}`);
    assert.equal(e.error?.type, "error", `${what}: ${JSON.stringify(e.error)}`);
    assert.equal(e.error?.error?.type, "invalid_request_error", `${what}: ${JSON.stringify(e.error)}`);
    return;
  }
  assert.fail(`${what}: accepted`);
}

if (mode === "reasoning") {
  // The prompt opens <think>: the thinking comes back as a thinking block, its budget spent at 6.
  const request = { model, max_tokens: 40, messages: [user("Tell me about the Union.")], temperature: 1, seed: 3,
                    thinking: { type: "enabled", budget_tokens: 6 } };
  const m = await client.messages.create(request);
  assert.equal(m.content[0].type, "thinking", JSON.stringify(m.content));
  assert.equal(typeof m.content[0].thinking, "string");
  assert.ok(m.content[0].signature.length > 0, "a thinking block without its signature");
  const live = await streamed(request);
  assert.deepEqual(live.content, m.content, "the streamed blocks differ");  // the signature_delta's too
  // The next turn sends the blocks back, signature and all, as Claude Code does.
  const next = await client.messages.create({ ...request, max_tokens: 4,
                                              messages: [...request.messages, { role: "assistant", content: m.content },
                                                         user("More.")] });
  assert.equal(next.type, "message");
  console.log(`messages reasoning: ${JSON.stringify(m.content).slice(0, 200)}`);
  console.log("messages reasoning: ok");
  process.exit(0);
}

// A plain message, whole and streamed.
const hello = { model, max_tokens: 12, messages: [user("Hello there.")], system: "Be kind.", temperature: 1, seed: 7 };
const m = await client.messages.create(hello);
assert.equal(m.type, "message");
assert.equal(m.role, "assistant");
assert.match(m.id, /^msg_/);
assert.ok(["end_turn", "max_tokens"].includes(m.stop_reason), m.stop_reason);
assert.ok(m.usage.input_tokens + m.usage.cache_read_input_tokens > 0 && m.usage.output_tokens <= 12, JSON.stringify(m.usage));
const live = await streamed(hello);
assert.deepEqual([live.content, live.stop_reason, live.usage.output_tokens], [m.content, m.stop_reason, m.usage.output_tokens],
                 "the streamed message differs");
// count_tokens: the prompt the message was given.
const counted = await client.messages.countTokens({ model, messages: hello.messages, system: hello.system });
assert.equal(counted.input_tokens, m.usage.input_tokens + m.usage.cache_read_input_tokens, "count_tokens differs from the usage");

// stop_sequences: a piece of the text above ends it there, and is named.
const long = { ...hello, max_tokens: 40 };
const text = textOf(await client.messages.create(long));
const at = [...Array(Math.max(0, text.length - 4)).keys()].find((k) => k > 2 && text.indexOf(text.slice(k, k + 3)) === k);
if (at !== undefined) {
  const stop = text.slice(at, at + 3);
  for (const cut of [await client.messages.create({ ...long, stop_sequences: ["\u0000never", stop] }),
                     await streamed({ ...long, stop_sequences: [stop] })]) {
    assert.equal(cut.stop_reason, "stop_sequence", JSON.stringify(cut));
    assert.equal(cut.stop_sequence, stop);
    assert.equal(textOf(cut), text.slice(0, at));
  }
  console.log(`messages: stop_sequences ${JSON.stringify([stop])} ended ${JSON.stringify(text.slice(0, at))}`);
}

// A final assistant turn is a prefill the reply continues: what chat's continue_final_message gives.
const prefill = [user("Tell me about the Union."), { role: "assistant", content: "The Union" }];
const continued = await client.messages.create({ model, max_tokens: 10, messages: prefill, temperature: 0 });
const chat = await (await fetch(`${baseURL}/v1/chat/completions`, { method: "POST", headers: { "Content-Type": "application/json" },
  body: JSON.stringify({ model, max_tokens: 10, messages: prefill, temperature: 0, add_generation_prompt: false,
                         continue_final_message: true }) })).json();
assert.equal(textOf(continued), chat.choices[0].message.content, "the prefill is not continued as chat continues it");

// output_config.format: the text is a document of the schema (ajv), whole and streamed alike.
const answerSchema = { type: "object", properties: { answer: { type: "string", maxLength: 12 },
  n: { type: "integer", minimum: -5, maximum: 99 } }, required: ["answer", "n"], additionalProperties: false };
const shaped = { model, max_tokens: 200, messages: [user("Tell me about the Union.")], temperature: 1, seed: 3,
                 output_config: { format: { type: "json_schema", schema: answerSchema } } };
const doc = await client.messages.create(shaped);
assert.equal(doc.stop_reason, "end_turn", JSON.stringify(doc));
const checkDoc = ajv.compile(answerSchema);
assert.ok(checkDoc(JSON.parse(textOf(doc))), `output_config.format: ${textOf(doc)} fails its schema`);
assert.equal(textOf(await streamed(shaped)), textOf(doc), "the streamed document differs");
console.log(`messages output_config: ${textOf(doc)}`);

// Custom tools.
const tools = [
  { name: "get_weather", description: "The weather in a city.",
    input_schema: { type: "object", properties: { city: { type: "string", maxLength: 10 },
      unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["city", "unit"], additionalProperties: false } },
  { name: "add", description: "Adds two integers.",
    input_schema: { type: "object", properties: { a: { type: "integer", minimum: 0, maximum: 99 },
      b: { type: "integer", minimum: 0, maximum: 99 } }, required: ["a", "b"], additionalProperties: false } },
];
function checkUses(message, what, only) {
  const uses = message.content.filter((b) => b.type === "tool_use");
  assert.ok(uses.length >= 1, `${what}: no tool_use in ${JSON.stringify(message.content)}`);
  assert.equal(message.stop_reason, "tool_use", what);
  assert.equal(new Set(uses.map((u) => u.id)).size, uses.length, `${what}: two uses share an id`);
  for (const u of uses) {
    if (only) assert.equal(u.name, only, what);
    const tool = tools.find((t) => t.name === u.name);
    assert.ok(tool, `${what}: a call to ${u.name}, which is not a tool`);
    const check = ajv.compile(tool.input_schema);
    assert.ok(check(u.input), `${what}: ${JSON.stringify(u.input)} fails its schema: ${ajv.errorsText(check.errors)}`);
  }
  return uses;
}
const ask = { model, max_tokens: 600, messages: [user("What is the weather in Paris? And 2 + 3?")], tools, temperature: 1.2 };
for (const [choice, only] of [[{ type: "any" }, null], [{ type: "tool", name: "add" }, "add"]]) {
  const whole = await client.messages.create({ ...ask, tool_choice: choice, seed: 5 });
  const uses = checkUses(whole, `tool_choice ${JSON.stringify(choice)}`, only);
  const again = await streamed({ ...ask, tool_choice: choice, seed: 5 });
  assert.deepEqual(checkUses(again, "streamed", only).map((u) => [u.name, u.input]), uses.map((u) => [u.name, u.input]),
                   "streamed tool_use differs");
}
const one = await client.messages.create({ ...ask, tool_choice: { type: "any", disable_parallel_tool_use: true }, seed: 2 });
const [use] = checkUses(one, "disable_parallel_tool_use");
assert.equal(one.content.filter((b) => b.type === "tool_use").length, 1, "disable_parallel_tool_use: one tool_use");
// The conversation goes on with the tool's result.
const next = await client.messages.create({
  model, max_tokens: 8, tools, seed: 1,
  messages: [ask.messages[0], { role: "assistant", content: one.content },
             user([{ type: "tool_result", tool_use_id: use.id, content: "18 degrees" }, { type: "text", text: "Thanks." }])],
});
assert.ok(["end_turn", "max_tokens", "tool_use"].includes(next.stop_reason), next.stop_reason);
const nextCount = await client.messages.countTokens({ model, tools, messages: [ask.messages[0], { role: "assistant", content: one.content },
  user([{ type: "tool_result", tool_use_id: use.id, content: "18 degrees" }, { type: "text", text: "Thanks." }])] });
assert.equal(nextCount.input_tokens, next.usage.input_tokens + next.usage.cache_read_input_tokens);

// Errors, in Anthropic's shape; the server answers on.
await expect400({ model, messages: [user("Hi")] }, "no max_tokens");
await expect400({ model, max_tokens: 5, messages: [user([{ type: "image", source: { type: "base64", media_type: "image/png", data: "" } }])] },
                "an image");
await expect400({ model, max_tokens: 5, messages: [user("Hi")], tools: [{ type: "web_search_20250305", name: "web_search" }] },
                "a server tool");
await expect400({ model, max_tokens: 5, messages: [user("Hi")], tools, tool_choice: { type: "tool", name: "nope" } },
                "tool_choice naming no tool");
await expect400({ model, max_tokens: 5, messages: [{ role: "system", content: "Hi" }] }, "a system turn");
await expect400({ model, max_tokens: 5, messages: [user("Hi")], output_config: { format: { type: "json_schema",
                  schema: { type: "object", properties: { e: { type: "string", format: "idn-email" } } } } } },
                "a schema keyword that cannot be enforced");
await expect400({ model, max_tokens: 5, messages: [user("Hi")], thinking: { type: "enabled", budget_tokens: 1024 } },
                "thinking, where the template has no reasoning block");
assert.ok((await client.messages.create({ model, max_tokens: 3, messages: [user("Hi")] })).content.length >= 1);
console.log(`messages: ${JSON.stringify(one.content)}`);
console.log("messages: ok");
