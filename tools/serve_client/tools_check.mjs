// The official openai client driving `difftx serve`'s structured output and tool calling, whole
// and streamed, every structured answer validated by ajv (with ajv-formats) against its schema:
// response_format json_schema / json_object, tools with tool_choice required / a named function /
// auto, parallel_tool_calls false, a conversation with tool calls and results; hostile schemas
// and tools answered with 400s naming the field, the server still answering afterwards; the same
// through the Responses API (POST /v1/responses), whole and as its typed events, and its stored
// responses (previous_response_id, retrieve, input items, delete).
//   node tools_check.mjs BASE_URL tools        (a template with <tool_call> blocks)
//   node tools_check.mjs BASE_URL calls FAMILY (only the tool calls, the server run with
//                                               --tool-parser FAMILY)
//   node tools_check.mjs BASE_URL reasoning    (a template that opens <think> in the prompt)
import assert from "node:assert/strict";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import OpenAI from "openai";

const [baseURL, mode, family] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "none", maxRetries: 0 });
const model = (await client.models.list()).data[0].id;
const ajv = new Ajv({ strict: true, allErrors: true });
addFormats(ajv);

function validate(schema, value, what) {
  const check = ajv.compile(schema);
  assert.ok(check(value), `${what}: ${JSON.stringify(value)} fails its schema: ${ajv.errorsText(check.errors)}`);
}

// Short documents, so that even random weights finish them.
const withoutIds = (output) => output.map(({ id, ...item }) => item);
const answerSchema = {
  type: "object",
  properties: {
    answer: { type: "string", maxLength: 12 },
    n: { type: "integer", minimum: -5, maximum: 99 },
    when: { type: "string", format: "date" },
    kind: { enum: ["a", "b", null, 3] },
  },
  required: ["answer", "n", "kind"],
  additionalProperties: false,
};
const messages = [{ role: "user", content: "Tell me about the Union." }];

async function streamed(request) {
  const stream = await client.chat.completions.create({ ...request, stream: true });
  const choices = [];
  for await (const chunk of stream)
    for (const c of chunk.choices) {
      const acc = (choices[c.index] ??= { content: "", reasoning: "", calls: [], finish: null });
      if (c.delta.content) acc.content += c.delta.content;
      if (c.delta.reasoning_content) acc.reasoning += c.delta.reasoning_content;
      for (const t of c.delta.tool_calls ?? []) {
        // A call's first piece names it (id, type, name); the others carry more of its arguments.
        const first = acc.calls[t.index] === undefined;
        assert.equal(t.index, first ? acc.calls.length : t.index, "a call's index skips one");
        assert.equal(Boolean(t.id && t.type === "function" && t.function?.name), first, `piece ${JSON.stringify(t)}`);
        const call = (acc.calls[t.index] ??= { id: t.id, name: t.function.name, arguments: "", pieces: 0 });
        call.arguments += t.function?.arguments ?? "";
        call.pieces += 1;
      }
      if (c.finish_reason) acc.finish = c.finish_reason;
    }
  return choices;
}

// A json_schema answer per seed, finished and valid (ajv against the schema as sent).
async function answers(label, schema, seeds, maxTokens) {
  for (const seed of seeds) {
    const r = await client.chat.completions.create({
      model, messages, response_format: { type: "json_schema", json_schema: { name: "answer", schema } },
      temperature: 1, seed, max_tokens: maxTokens,
    });
    assert.equal(r.choices[0].finish_reason, "stop", JSON.stringify(r.choices[0]));
    validate(schema, JSON.parse(r.choices[0].message.content), `${label} (seed ${seed})`);
    if (seed === seeds[0]) console.log(`${label}: ${r.choices[0].message.content.slice(0, 200)}`);
  }
}

async function expect400(request, param, what) {
  try {
    await client.chat.completions.create(request);
  } catch (e) {
    assert.ok(e instanceof OpenAI.BadRequestError, `${what}: not a 400 but ${e}`);
    assert.equal(e.param, param, `${what}: param ${e.param}, message ${e.message}`);
    return e.message;
  }
  assert.fail(`${what}: accepted`);
}

const format = { type: "json_schema", json_schema: { name: "answer", schema: answerSchema, strict: true } };
if (mode === "reasoning") {
  // The prompt opens <think>: the thinking is free, closed by max_reasoning_tokens at the latest,
  // and the document follows it.
  for (const seed of [1, 2, 3]) {
    const request = { model, messages, response_format: format, max_reasoning_tokens: 6, max_tokens: 200,
                      temperature: 1, seed };
    const r = await client.chat.completions.create(request);
    const m = r.choices[0].message;
    assert.equal(r.choices[0].finish_reason, "stop", JSON.stringify(r));
    assert.equal(typeof m.reasoning_content, "string");
    validate(answerSchema, JSON.parse(m.content), `reasoning then JSON (seed ${seed})`);
    const s = (await streamed(request))[0];
    assert.equal(s.content, m.content, "streamed content differs");
    assert.equal(s.reasoning, m.reasoning_content, "streamed reasoning differs");
    // Stop strings are matched in the content only, as vLLM skips them in reasoning: ones that
    // the budget's forced "</think>" holds cut neither it nor the thoughts, whole or streamed.
    const stopped = { ...request, stop: ["</th", "ink>"] };
    const cut = (await client.chat.completions.create(stopped)).choices[0].message;
    assert.equal(cut.reasoning_content, m.reasoning_content, `stop strings cut the reasoning: ${JSON.stringify(cut)}`);
    assert.equal(cut.content, m.content, "stop strings changed the content");
    const cutStream = (await streamed(stopped))[0];
    assert.equal(cutStream.reasoning, m.reasoning_content, "stop strings cut the streamed reasoning");
    assert.equal(cutStream.content, m.content, "stop strings changed the streamed content");
  }
  // The Responses API: the thinking is a reasoning item before the message, whole and streamed.
  const thought = { model, input: messages[0].content, max_reasoning_tokens: 6, max_output_tokens: 200, temperature: 1,
                    seed: 1, text: { format: { type: "json_schema", name: "answer", schema: answerSchema } } };
  const r = await client.responses.create(thought);
  assert.deepEqual(r.output.map((i) => i.type), ["reasoning", "message"], JSON.stringify(r.output));
  validate(answerSchema, JSON.parse(r.output_text), "responses: reasoning then JSON");
  const live = await streamedResponse(thought);
  assert.deepEqual(withoutIds(live.output), withoutIds(r.output), "the streamed response's items differ");
  // include: the reasoning sealed (encrypted_content) and the text's logprobs, whole and streamed
  // alike; a client that stores nothing sends the sealed reasoning back in its next request.
  const sealedRequest = { ...thought, store: false, top_logprobs: 2,
                          include: ["reasoning.encrypted_content", "message.output_text.logprobs"] };
  const sealed = await client.responses.create(sealedRequest);
  assert.equal(sealed.output_text, r.output_text, "include changed the answer");
  const [reasoning, message] = sealed.output;
  assert.equal(typeof reasoning.encrypted_content, "string", JSON.stringify(reasoning));
  assert.equal(r.output[0].encrypted_content, undefined, "encrypted_content without include");
  const logprobs = message.content[0].logprobs;
  const spelled = Buffer.concat(logprobs.map((l) => Buffer.from(l.bytes))).toString();
  assert.ok(spelled.includes(sealed.output_text) && spelled.length < sealed.output_text.length + 16,
            `the logprobs' tokens do not spell the text: ${JSON.stringify(spelled)}`);
  for (const l of logprobs) {
    assert.ok(l.logprob <= 0 && l.top_logprobs.length === 2, JSON.stringify(l));
    assert.ok(l.top_logprobs[0].logprob >= l.top_logprobs[1].logprob, JSON.stringify(l));
  }
  assert.deepEqual(withoutIds(await streamedResponse(sealedRequest).then((s) => s.output)), withoutIds(sealed.output),
                   "the streamed response's items differ (include)");
  const followUp = (reasoningItem) => client.responses.create({ model, store: false, max_output_tokens: 4, seed: 2,
    input: [{ role: "user", content: messages[0].content }, reasoningItem, message, { role: "user", content: "More." }] });
  const opened = await followUp({ type: "reasoning", id: reasoning.id, summary: [], encrypted_content: reasoning.encrypted_content });
  const plain = await followUp({ type: "reasoning", id: reasoning.id, summary: [], content: reasoning.content });
  assert.deepEqual([opened.usage.input_tokens, opened.output_text], [plain.usage.input_tokens, plain.output_text],
                   "the sealed reasoning read back differs from its text");
  try {
    await followUp({ type: "reasoning", id: reasoning.id, summary: [], encrypted_content: "gAAAAABforged==" });
    assert.fail("a forged encrypted_content was taken");
  } catch (e) {
    assert.ok(e instanceof OpenAI.BadRequestError && e.code === "invalid_encrypted_content", `${e}`);
  }
  // Without a budget the block is free text; a budget of 0 closes it at once.
  const none = await client.chat.completions.create({ model, messages, max_reasoning_tokens: 0, max_tokens: 8, seed: 4 });
  assert.equal(none.choices[0].message.reasoning_content, "");
  console.log("reasoning: ok");
  process.exit(0);
}

if (mode === "tools") {
  // response_format json_schema: n choices, sampled hot, whole and streamed.
  const whole = await client.chat.completions.create({
    model, messages, response_format: format, n: 4, temperature: 1.5, seed: 11, max_tokens: 200,
  });
  for (const c of whole.choices) {
    assert.equal(c.finish_reason, "stop", JSON.stringify(c));
    validate(answerSchema, JSON.parse(c.message.content), "json_schema answer");
  }
  const live = await streamed({ model, messages, response_format: format, n: 4, temperature: 1.5, seed: 11, max_tokens: 200 });
  assert.deepEqual(live.map((c) => c.content), whole.choices.map((c) => c.message.content), "streamed answers differ");
  console.log(`json_schema: ${whole.choices[0].message.content}`);

  // json_object: an object, however long the model makes it (finished ones parse).
  const object = await client.chat.completions.create({
    model, messages, response_format: { type: "json_object" }, temperature: 0.7, seed: 3, max_tokens: 300,
  });
  if (object.choices[0].finish_reason === "stop") {
    const value = JSON.parse(object.choices[0].message.content);
    assert.ok(value !== null && typeof value === "object" && !Array.isArray(value));
  }
  console.log(`json_object: ${object.choices[0].finish_reason} ${object.choices[0].message.content.slice(0, 60)}`);

  // The string formats, checked by ajv-formats (their full mode).
  const formatsSchema = {
    type: "object",
    properties: {
      ...Object.fromEntries(["email", "hostname", "ipv4", "ipv6", "uri", "time", "date-time", "uuid", "duration"]
        .map((f) => [f, { type: "string", format: f }])),
      // pydantic's HttpUrl: a length limit beside the format.
      site: { type: "string", format: "uri", minLength: 1, maxLength: 2083 },
    },
    required: ["email", "hostname", "ipv4", "ipv6", "uri", "time", "date-time", "uuid", "duration", "site"],
    additionalProperties: false,
  };
  await answers("formats", formatsSchema, [1, 2], 1500);

  // allOf, as OpenAPI composes schemas: a $ref'd base, more properties (one of the base's bounds
  // tightened), and a choice between two shapes; the answer validated by ajv against the schema as sent.
  const composedSchema = {
    $defs: { Base: { type: "object", properties: { id: { type: "integer", minimum: 1, maximum: 99 } }, required: ["id"] } },
    allOf: [
      { $ref: "#/$defs/Base" },
      { type: "object", properties: { id: { type: "integer", maximum: 9 }, label: { type: "string", maxLength: 6 } },
        required: ["label"] },
      { anyOf: [{ type: "object", properties: { done: { const: true } }, required: ["done"] },
                { type: "object", properties: { left: { type: "integer", minimum: 0, maximum: 5 } }, required: ["left"] }] },
    ],
  };
  await answers("allOf", composedSchema, [1, 2, 3], 200);

  // A dict keyed by an Enum with a size, as pydantic writes dict[Subject, int] = Field(min_length=1,
  // max_length=2): propertyNames and a member count; and multiples (OpenAI's multipleOf), of
  // values whose quotients ajv computes exactly in doubles (an integer, a binary fraction).
  const dictSchema = {
    type: "object",
    properties: {
      scores: { type: "object", additionalProperties: { type: "integer", minimum: 0, maximum: 9 },
                propertyNames: { enum: ["math", "art", "music"] }, minProperties: 1, maxProperties: 2 },
      count: { type: "integer", multipleOf: 5, minimum: 0, maximum: 100 },
      step: { type: "number", multipleOf: 0.25, minimum: -2, maximum: 2 },
    },
    required: ["scores", "count", "step"], additionalProperties: false,
  };
  await answers("dict", dictSchema, [1, 2, 3], 200);

  // The peers' spellings of a constraint, as their clients send them (extra body fields): vLLM's
  // structured_outputs and guided_* (a regex the whole answer matches, a choice), llama.cpp's json_schema.
  const choices = ["yes", "no", "not sure"];
  for (const request of [{ structured_outputs: { choice: choices } }, { guided_choice: choices }]) {
    const r = await client.chat.completions.create({ model, messages, ...request, n: 3, temperature: 1.5, seed: 2 });
    for (const c of r.choices) {
      assert.equal(c.finish_reason, "stop", JSON.stringify(c));
      assert.ok(choices.includes(c.message.content), `${JSON.stringify(request)}: ${c.message.content}`);
    }
    const live = await streamed({ model, messages, ...request, n: 3, temperature: 1.5, seed: 2 });
    assert.deepEqual(live.map((c) => c.content), r.choices.map((c) => c.message.content), "streamed choices differ");
  }
  for (const request of [{ structured_outputs: { regex: "[0-9]{3}-[a-z]{2}" } }, { guided_regex: "[0-9]{3}-[a-z]{2}" }]) {
    const r = await client.chat.completions.create({ model, messages, ...request, temperature: 1.5, seed: 4 });
    assert.match(r.choices[0].message.content, /^[0-9]{3}-[a-z]{2}$/, JSON.stringify(r.choices[0]));
  }
  for (const request of [{ json_schema: answerSchema }, { guided_json: JSON.stringify(answerSchema) },
                         { structured_outputs: { json: answerSchema } }]) {
    const r = await client.chat.completions.create({ model, messages, ...request, temperature: 1, seed: 6, max_tokens: 200 });
    assert.equal(r.choices[0].finish_reason, "stop", JSON.stringify(r.choices[0]));
    validate(answerSchema, JSON.parse(r.choices[0].message.content), `${Object.keys(request)[0]} answer`);
  }
  const completion = await client.completions.create({ model, prompt: "The answer:", guided_regex: "(true|false)!",
                                                       temperature: 1.5, seed: 8 });
  assert.match(completion.choices[0].text, /^(true|false)!$/);
  assert.match(await expect400({ model, messages, guided_regex: "(?=a)b" }, "guided_regex", "lookahead"),
               /the regex cannot be enforced/);
  await expect400({ model, messages, guided_json: answerSchema, response_format: format }, "guided_json", "two constraints");
  console.log(`peers' fields: ok (${completion.choices[0].text})`);
}

// Tools.
const tools = [
  { type: "function", function: { name: "get_weather", description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string", maxLength: 10 },
      unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["city", "unit"], additionalProperties: false } } },
  { type: "function", function: { name: "add", description: "Adds two integers.",
    parameters: { type: "object", properties: { a: { type: "integer", minimum: 0, maximum: 99 },
      b: { type: "integer", minimum: 0, maximum: 99 } }, required: ["a", "b"], additionalProperties: false } } },
  { type: "function", function: { name: "now" } },
];
const parametersOf = (name) => {
  const t = tools.find((x) => x.function.name === name);
  assert.ok(t, `a call to '${name}', which is not a tool`);
  return t.function.parameters ?? { type: "object", properties: {}, additionalProperties: false };
};
function checkCalls(calls, what, only) {
  assert.ok(calls.length >= 1, `${what}: no tool calls`);
  assert.equal(new Set(calls.map((c) => c.id)).size, calls.length, `${what}: two calls share an id`);
  for (const call of calls) {
    const name = call.function?.name ?? call.name;
    const args = call.function?.arguments ?? call.arguments;
    if (only) assert.equal(name, only, `${what}: called ${name}`);
    // Kimi's: the id the model wrote, or one made where an earlier call of the reply has that.
    const id = family === "mistral" || family === "mistral_v11" ? /^[A-Za-z0-9]{9}$/
               : family === "kimi_k2" ? new RegExp(`^(functions\\.${name}:[0-9]{1,6}|call_[A-Za-z0-9]{24})$`)
               : /^call_[A-Za-z0-9]{24}$/;
    assert.match(call.id, id);
    validate(parametersOf(name), JSON.parse(args), `${what}: ${name}`);
  }
}
const modelIds = (calls) => calls.map((c) => (c.id.startsWith("functions.") ? c.id : null));  // kimi_k2's

// The server runs with --max-tool-calls 3: a turn holds at most three calls.
for (const [choice, only] of [["required", null], [{ type: "function", function: { name: "add" } }, "add"]]) {
  const r = await client.chat.completions.create({
    model, messages, tools, tool_choice: choice, n: 2, temperature: 1.2, seed: 5, max_tokens: 900,
  });
  for (const c of r.choices) {
    assert.equal(c.finish_reason, "tool_calls", JSON.stringify(c));
    assert.equal(c.message.content, null);
    checkCalls(c.message.tool_calls, `tool_choice ${JSON.stringify(choice)}`, only);
    assert.ok(c.message.tool_calls.length <= 3, "more calls than the turn's bound");
  }
  const s = await streamed({ model, messages, tools, tool_choice: choice, n: 2, temperature: 1.2, seed: 5, max_tokens: 900 });
  for (let i = 0; i < 2; ++i) {
    assert.equal(s[i].finish, "tool_calls");
    checkCalls(s[i].calls, `streamed tool_choice ${JSON.stringify(choice)}`, only);
    assert.deepEqual(s[i].calls.map((c) => [c.name, c.arguments]),
                     r.choices[i].message.tool_calls.map((c) => [c.function.name, c.function.arguments]),
                     "streamed calls differ from the whole response");
    assert.deepEqual(modelIds(s[i].calls), modelIds(r.choices[i].message.tool_calls), "streamed ids differ");
  }
  console.log(`tool_choice ${JSON.stringify(choice)}: ${JSON.stringify(r.choices[0].message.tool_calls.map((c) => c.function))}`);
  // The arguments stream as the model writes them, not in one piece at the end.
  const calls = s.flatMap((c) => c.calls);
  assert.ok(calls.some((c) => c.pieces > 2), `arguments not streamed: ${JSON.stringify(calls)}`);

  // The client's own stream helper: its argument events add up to the calls of the whole response.
  const helper = client.chat.completions.stream({ model, messages, tools, tool_choice: choice, n: 2, temperature: 1.2,
                                                  seed: 5, max_tokens: 900 });
  const deltas = new Map();
  helper.on("tool_calls.function.arguments.delta", (e) => deltas.set(e.index, (deltas.get(e.index) ?? 0) + 1));
  const final = await helper.finalChatCompletion();
  assert.ok(deltas.size > 0, "the stream helper saw no argument pieces");
  for (let i = 0; i < 2; ++i)
    assert.deepEqual(final.choices[i].message.tool_calls.map((c) => [c.function.name, c.function.arguments]),
                     r.choices[i].message.tool_calls.map((c) => [c.function.name, c.function.arguments]),
                     "the stream helper's calls differ from the whole response");
}

// parallel_tool_calls false: exactly one call.
const single = await client.chat.completions.create({
  model, messages, tools, tool_choice: "required", parallel_tool_calls: false, n: 2, temperature: 1.5, seed: 8,
  max_tokens: 600,
});
for (const c of single.choices) {
  assert.equal(c.message.tool_calls.length, 1);
  checkCalls(c.message.tool_calls, "parallel_tool_calls false");
}

// auto: text, or calls that validate; with response_format, the document or calls.
for (const extra of [{}, { response_format: format }]) {
  const r = await client.chat.completions.create({
    model, messages, tools, tool_choice: "auto", n: 2, temperature: 1, seed: 2, max_tokens: 150, ...extra,
  });
  for (const c of r.choices) {
    if (c.message.tool_calls) checkCalls(c.message.tool_calls, "auto");
    else if (c.finish_reason === "length") continue;  // a turn of calls or a document cut short
    else if (extra.response_format && c.finish_reason === "stop") validate(answerSchema, JSON.parse(c.message.content), "auto + json_schema");
    else assert.equal(typeof c.message.content, "string");
  }
}

if (mode === "calls") {
  // Calls written as Python: a name or a property that is no identifier cannot be passed.
  if (family === "pythonic") {
    const name = await expect400({ model, messages, tool_choice: "required",
                                   tools: [{ type: "function", function: { name: "get-time" } }] },
                                 "tools", "a function name Python cannot call");
    assert.ok(name.includes("#/tools/0/function/name"), name);
    const property = await expect400({ model, messages, tool_choice: "required", tools: [{ type: "function",
      function: { name: "f", parameters: { type: "object", properties: { "first-name": { type: "string" } } } } }] },
                                     "tools", "a property Python cannot pass");
    assert.ok(property.includes("#/tools/0/function/parameters/properties/first-name"), property);
  }
  // Calls written as XML: a value that may be a string is raw text, where anyOf cannot be told apart.
  if (family === "qwen3_coder" || family === "glm45") {
    const parameters = { type: "object", properties: { x: { anyOf: [{ type: "string" }, { type: "integer" }] } } };
    const m = await expect400({ model, messages, tool_choice: "required",
                                tools: [{ type: "function", function: { name: "f", parameters } }] },
                              "tools", "anyOf on a raw XML value");
    assert.ok(m.includes("#/tools/0/function/parameters/properties/x/anyOf"), m);
  }
  console.log(`calls (${family}): ok`);
  process.exit(0);
}

// A conversation with a call and its result renders and answers.
const followUp = await client.chat.completions.create({
  model, tools, max_tokens: 8, seed: 1,
  messages: [...messages,
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function",
      function: { name: "add", arguments: JSON.stringify({ a: 1, b: 2 }) } }] },
    { role: "tool", tool_call_id: "call_1", content: "3" }],
});
assert.ok(["stop", "length"].includes(followUp.choices[0].finish_reason));

// Hostile schemas and tools: 400s naming the field; the server stays up.
let deep = { type: "string" };
for (let i = 0; i < 100; ++i) deep = { type: "array", items: deep };
const hostile = [
  [{ type: "object", properties: { a: { type: "string", format: "idn-email" } } }, "format"],
  [deep, "nested deeper"],
  [{ enum: Array.from({ length: 20000 }, (_, i) => i) }, "enum"],
  [{ $ref: "#" }, "matches no text"],
  [{ anyOf: [{ $ref: "#" }, { type: "null" }] }, "left-recursive"],
  [{ type: "string", pattern: "(a)\\1" }, "backreference"],
  [{ type: "string", pattern: "[z-a]" }, "pattern"],
  [{ type: "object", patternProperties: { x: {} } }, "patternProperties"],
  [{ type: "integer", multipleOf: 1000 }, "multipleOf"],
  [{ type: "object", not: {} }, "not"],
];
for (const [schema, part] of hostile) {
  const m1 = await expect400({ model, messages, response_format: { type: "json_schema", json_schema: { name: "x", schema } } },
                             "response_format", `response_format ${part}`);
  assert.ok(m1.includes(part), `'${m1}' does not name ${part}`);
  // Arguments are objects: the schema is one's property, "#" pointing at it as before.
  const x = JSON.parse(JSON.stringify(schema).replaceAll('"#"', '"#/$defs/x"'));
  const parameters = { type: "object", properties: { x: { $ref: "#/$defs/x" } }, required: ["x"], $defs: { x } };
  const m2 = await expect400({ model, messages, tool_choice: "required",
                               tools: [{ type: "function", function: { name: "f", parameters } }] },
                             "tools", `tool parameters ${part}`);
  assert.ok(m2.includes("#/tools/0/function/parameters"), m2);
}
await expect400({ model, messages, tools, tool_choice: { type: "function", function: { name: "nope" } } }, "tool_choice",
                "an unknown function");
await expect400({ model, messages, tools: [{ type: "function", function: { name: "has space" } }] }, "tools", "a bad name");
await expect400({ model, messages, tools: [{ type: "function" }] }, "tools", "a malformed tool");
await expect400({ model, messages, tools: [{ type: "function", function: { name: "f", parameters: { type: "string" } } }] },
                "tools", "parameters that are not an object's");
await expect400({ model, messages, grammar: "root ::= (" }, "grammar", "a broken grammar");
const after = await client.chat.completions.create({ model, messages, max_tokens: 4 });
assert.ok(after.choices[0].message.content !== undefined, "the server stopped answering");

// The Responses API (POST /v1/responses) through the client's responses resource: flat function
// tools with tool_choice required and named, the streamed events adding up to the whole response,
// a conversation continued with the call and its function_call_output (sent whole, and through
// previous_response_id: the same answer), the stored responses retrieved, listed and deleted,
// text.format json_schema validated by ajv, and the fields the server refuses.
const flatTools = tools.map((t) => ({ type: "function", ...t.function }));
async function streamedResponse(request) {
  const events = [];
  for await (const e of await client.responses.create({ ...request, stream: true })) events.push(e);
  events.forEach((e, i) => assert.equal(e.sequence_number, i, `event ${i}: ${e.type}`));
  assert.deepEqual(events.slice(0, 2).map((e) => e.type), ["response.created", "response.in_progress"]);
  const last = events.at(-1);
  assert.ok(["response.completed", "response.incomplete"].includes(last.type), last.type);
  // Each item's deltas add up to what its done event and the final response hold.
  for (const [index, item] of last.response.output.entries()) {
    const deltas = events.filter((e) => e.output_index === index && e.type.endsWith(".delta")).map((e) => e.delta).join("");
    const whole = item.type === "function_call" ? item.arguments
                : item.type === "message" ? item.content[0].text : item.content.map((c) => c.text).join("");
    assert.equal(deltas, whole, `item ${index} (${item.type})`);
    assert.deepEqual(events.find((e) => e.type === "response.output_item.done" && e.output_index === index).item, item);
  }
  return last.response;
}
const asCalls = (output) => output.filter((i) => i.type === "function_call")
  .map((c) => ({ id: c.call_id, name: c.name, arguments: c.arguments }));
for (const [choice, only] of [["required", null], [{ type: "function", name: "add" }, "add"]]) {
  const request = { model, input: messages[0].content, instructions: "Use a tool.", tools: flatTools, tool_choice: choice,
                    temperature: 1.2, seed: 5, max_output_tokens: 900 };
  const r = await client.responses.create(request);
  assert.equal(r.object, "response");
  assert.equal(r.status, "completed", JSON.stringify(r));
  assert.ok(r.id.startsWith("resp_"));
  checkCalls(asCalls(r.output), `responses tool_choice ${JSON.stringify(choice)}`, only);
  assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
  const live = await streamedResponse(request);
  assert.deepEqual(asCalls(live.output).map((c) => [c.name, c.arguments]), asCalls(r.output).map((c) => [c.name, c.arguments]),
                   "streamed calls differ from the whole response");
  assert.deepEqual((await client.responses.retrieve(live.id)).output, live.output, "a streamed response as stored");
}
async function expect404(what, request) {
  try {
    await request();
  } catch (e) {
    assert.ok(e instanceof OpenAI.NotFoundError, `${what}: not a 404 but ${e}`);
    return;
  }
  assert.fail(`${what}: found`);
}
const first = await client.responses.create({ model, input: messages[0].content, tools: flatTools, tool_choice: "required",
                                              parallel_tool_calls: false, seed: 2, max_output_tokens: 600 });
assert.equal(first.store, true, "store is OpenAI's default");
const call = first.output.filter((i) => i.type === "function_call");
assert.equal(call.length, 1, "parallel_tool_calls false: one call");
const result = { type: "function_call_output", call_id: call[0].call_id, output: "42" };
const nextTurn = { model, tools: flatTools, max_output_tokens: 8, seed: 1, instructions: "Answer." };
const continued = await client.responses.create({
  ...nextTurn, input: [{ role: "user", content: messages[0].content }, ...first.output, result],
});
assert.ok(["completed", "incomplete"].includes(continued.status));
// The same conversation through the stored response: the same prompt, so the same answer.
const chained = await client.responses.create({ ...nextTurn, previous_response_id: first.id, input: [result] });
assert.equal(chained.previous_response_id, first.id);
assert.deepEqual([chained.usage.input_tokens, chained.output_text, asCalls(chained.output).map((c) => [c.name, c.arguments])],
                 [continued.usage.input_tokens, continued.output_text, asCalls(continued.output).map((c) => [c.name, c.arguments])],
                 "previous_response_id differs from the conversation sent whole");
const kept = await client.responses.retrieve(first.id);
assert.deepEqual([kept.id, kept.output, kept.usage], [first.id, first.output, first.usage], "the stored response");
for (const [query, param] of [[{ stream: true }, "stream"], [{ include: ["message.output_text.logprobs"] }, "include"]]) {
  try {
    await client.responses.retrieve(first.id, query);
    assert.fail(`retrieve ${JSON.stringify(query)}: accepted`);
  } catch (e) {
    assert.ok(e instanceof OpenAI.BadRequestError && e.param === param, `retrieve ${JSON.stringify(query)}: ${e}`);
  }
}
// Its input items: the chained response's conversation before its output, the last first.
const inputs = await client.responses.inputItems.list(chained.id);
assert.deepEqual(inputs.data.map((i) => i.type).reverse(), ["message", ...first.output.map((i) => i.type), "function_call_output"]);
assert.equal(inputs.data.at(-1).content, messages[0].content);
const pages = [];
for await (const item of client.responses.inputItems.list(chained.id, { order: "asc", limit: 1 })) pages.push(item.id);
assert.deepEqual(pages, inputs.data.map((i) => i.id).reverse(), "input items page by page");
for (const [query, param] of [[{ limit: 0 }, "limit"], [{ limit: 101 }, "limit"], [{ order: "up" }, "order"], [{ after: "msg_x" }, "after"]]) {
  try {
    await client.responses.inputItems.list(chained.id, query);
    assert.fail(`input items ${JSON.stringify(query)}: accepted`);
  } catch (e) {
    assert.ok(e instanceof OpenAI.BadRequestError && e.param === param, `input items ${JSON.stringify(query)}: ${e}`);
  }
}
await client.responses.delete(first.id);
await expect404("a deleted response", () => client.responses.retrieve(first.id));
await expect404("deleted twice", () => client.responses.delete(first.id));
await expect404("continuing a deleted response", () => client.responses.create({ ...nextTurn, previous_response_id: first.id, input: [result] }));
const unstored = await client.responses.create({ model, input: "Hi", store: false, max_output_tokens: 2 });
assert.equal(unstored.store, false);
await expect404("a response with store false", () => client.responses.retrieve(unstored.id));
const docRequest = { model, input: messages[0].content, temperature: 1, seed: 3, max_output_tokens: 200,
                     text: { format: { type: "json_schema", name: "answer", schema: answerSchema, strict: true } } };
const doc = await client.responses.create(docRequest);
assert.equal(doc.status, "completed", JSON.stringify(doc));
validate(answerSchema, JSON.parse(doc.output_text), "responses text.format json_schema");
assert.equal((await streamedResponse(docRequest)).output.at(-1).content[0].text, doc.output_text, "streamed document differs");
// truncation "auto": a conversation longer than the context loses its oldest messages, as few as
// fit, starting at a user message: the longest such tail that fits, sent as it is.
const turns = [];
for (let t = 0; t < 40; ++t)
  turns.push({ role: "user", content: `Turn ${t}: ${"The Congress of the United States shall assemble. ".repeat(6)}` },
             { role: "assistant", content: `Reply ${t}: ${"the people of the Union ".repeat(5)}` });
turns.push({ role: "user", content: "Tell me about the Union." },
           { type: "function_call", call_id: "call_9", name: "add", arguments: '{"a": 1, "b": 2}' },
           { type: "function_call_output", call_id: "call_9", output: "3" });
await expectResponses400({ input: turns, max_output_tokens: 2 }, "input");
const fitted = await client.responses.create({ model, input: turns, truncation: "auto", max_output_tokens: 2, seed: 1 });
assert.equal(fitted.truncation, "auto");
assert.ok(fitted.usage.input_tokens + 2 <= 2048, `${fitted.usage.input_tokens} tokens`);
let start = 0;
for (; start < turns.length; ++start) {
  if (turns[start].role !== "user") continue;
  try {
    const explicit = await client.responses.create({ model, input: turns.slice(start), max_output_tokens: 2, seed: 1 });
    assert.deepEqual([explicit.usage.input_tokens, explicit.output_text], [fitted.usage.input_tokens, fitted.output_text],
                     `truncation auto kept other items than the ${turns.length - start} last that fit`);
    break;
  } catch (e) {
    if (!(e instanceof OpenAI.BadRequestError)) throw e;
  }
}
assert.ok(start < turns.length, "nothing fits");
console.log(`truncation auto: the last ${turns.length - start} of ${turns.length} items kept (${fitted.usage.input_tokens} tokens)`);
// Where even the last items alone do not fit, the 400 names the Responses fields.
await expectResponses400({ input: turns, truncation: "auto", max_output_tokens: 2040 }, "max_output_tokens");

// background: the Response comes back queued and is polled to its end, the answer run in the
// foreground; its events are read again whole and from past any point; a cancel ends one
// (idempotent), a delete too; a response that did not run in the background cannot be cancelled.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const bgRequest = { model, input: messages[0].content, max_output_tokens: 40, seed: 7, temperature: 1 };
const foreground = await client.responses.create(bgRequest);
let bg = await client.responses.create({ ...bgRequest, background: true });
assert.equal(bg.background, true);
assert.ok(["queued", "in_progress"].includes(bg.status), bg.status);
while (["queued", "in_progress"].includes(bg.status)) {
  await sleep(50);
  bg = await client.responses.retrieve(bg.id);
}
assert.deepEqual([bg.status, bg.output_text, bg.usage.output_tokens],
                 [foreground.status, foreground.output_text, foreground.usage.output_tokens], "background differs");
const replayed = [];
for await (const e of await client.responses.retrieve(bg.id, { stream: true })) replayed.push(e);
replayed.forEach((e, i) => assert.equal(e.sequence_number, i));
assert.deepEqual(withoutIds(replayed.at(-1).response.output), withoutIds(bg.output), "the replayed events' response");
const resumed = [];
for await (const e of await client.responses.retrieve(bg.id, { stream: true, starting_after: 3 })) resumed.push(e);
assert.deepEqual(resumed, replayed.slice(4), "events from past starting_after");
const farPast = await fetch(`${baseURL}/responses/${bg.id}?stream=true&starting_after=9223372036854775807`);
assert.equal(farPast.status, 400, "starting_after at the largest int64");
assert.equal((await farPast.json()).error.param, "starting_after");
const live = [];
for await (const e of await client.responses.create({ ...bgRequest, background: true, stream: true })) live.push(e);
assert.deepEqual(withoutIds(live.at(-1).response.output), withoutIds(bg.output), "a streamed background response");
assert.equal((await client.responses.cancel(bg.id)).status, bg.status, "cancelling an ended response");
const long = await client.responses.create({ model, input: messages[0].content, max_output_tokens: 1500, background: true });
const cancelled = await client.responses.cancel(long.id);
assert.equal(cancelled.status, "cancelled");
assert.deepEqual(await client.responses.cancel(long.id), cancelled, "a second cancel");
assert.equal((await client.responses.retrieve(long.id)).status, "cancelled");
const stopped = [];
for await (const e of await client.responses.retrieve(long.id, { stream: true })) stopped.push(e);
assert.ok(!stopped.some((e) => e.type === "error"), "a cancelled run's events end in an error");
const deleted = await client.responses.create({ model, input: messages[0].content, max_output_tokens: 1500, background: true });
await client.responses.delete(deleted.id);
await expect404("a deleted background response", () => client.responses.retrieve(deleted.id));
try {
  await client.responses.cancel(fitted.id);
  assert.fail("a foreground response was cancelled");
} catch (e) {
  assert.ok(e instanceof OpenAI.BadRequestError, `${e}`);
}
await expect404("cancelling an unknown response", () => client.responses.cancel("resp_nope"));
// The Conversations API: a conversation made with an item, a response in it (the prompt of its
// items sent whole; its input and output then added to it), its items paged, one read, one added
// and deleted, its metadata changed, then the conversation deleted.
const conversation = await client.conversations.create({ items: [{ role: "user", content: messages[0].content }],
                                                        metadata: { topic: "union" } });
assert.ok(conversation.id.startsWith("conv_") && conversation.metadata.topic === "union", JSON.stringify(conversation));
const inConversation = await client.responses.create({ model, conversation: conversation.id, input: "Answer briefly.",
                                                       max_output_tokens: 8, seed: 4 });
assert.deepEqual(inConversation.conversation, { id: conversation.id });
const sentWhole = await client.responses.create({ model, max_output_tokens: 8, seed: 4,
  input: [{ role: "user", content: messages[0].content }, { role: "user", content: "Answer briefly." }] });
assert.deepEqual([inConversation.usage.input_tokens, inConversation.output_text], [sentWhole.usage.input_tokens, sentWhole.output_text],
                 "a response in a conversation differs from its items sent whole");
const listed = [];
for await (const item of client.conversations.items.list(conversation.id, { order: "asc", limit: 1 })) listed.push(item);
assert.deepEqual(listed.map((i) => i.type), ["message", "message", ...inConversation.output.map((i) => i.type)]);
assert.equal(listed[1].content[0].text, "Answer briefly.");
assert.deepEqual(await client.conversations.items.retrieve(listed[0].id, { conversation_id: conversation.id }), listed[0]);
const addedItems = await client.conversations.items.create(conversation.id, { items: [{ role: "user", content: "And then?" }] });
assert.equal(addedItems.data.length, 1);
assert.equal((await client.conversations.items.delete(addedItems.data[0].id, { conversation_id: conversation.id })).id,
             conversation.id);
await expect404("a deleted item", () => client.conversations.items.retrieve(addedItems.data[0].id, { conversation_id: conversation.id }));
assert.equal((await client.conversations.update(conversation.id, { metadata: { topic: "states" } })).metadata.topic, "states");
await expectResponses400({ conversation: conversation.id, previous_response_id: doc.id }, "conversation");
// While a response runs in the conversation, another is refused (OpenAI's conversation_locked); once
// it has ended (here, cancelled), the conversation takes the next.
const running = await client.responses.create({ model, conversation: conversation.id, input: "Go on.",
                                                max_output_tokens: 1500, background: true });
try {
  await client.responses.create({ model, conversation: conversation.id, input: "x", max_output_tokens: 1 });
  assert.fail("a second response ran in a conversation held by a running one");
} catch (e) {
  assert.ok(e instanceof OpenAI.BadRequestError && e.code === "conversation_locked", `${e}`);
}
assert.equal((await client.responses.cancel(running.id)).status, "cancelled");
await client.responses.create({ model, conversation: conversation.id, input: "x", max_output_tokens: 1 });
await client.conversations.delete(conversation.id);
await expect404("a deleted conversation", () => client.conversations.retrieve(conversation.id));
await expect404("a response in a deleted conversation", () => client.responses.create({ model, conversation: conversation.id, input: "x" }));
console.log(`conversations: ${listed.length} items after one response`);
const notStored = { ...bgRequest, background: true, store: false };
await expectResponses400(notStored, "background");
console.log(`background: ${JSON.stringify(bg.output_text)}, cancelled after ${stopped.length} events`);
async function expectResponses400(request, param) {
  try {
    await client.responses.create({ model, input: "Hi", ...request });
  } catch (e) {
    assert.ok(e instanceof OpenAI.BadRequestError, `${JSON.stringify(request)}: not a 400 but ${e}`);
    assert.equal(e.param, param, e.message);
    return;
  }
  assert.fail(`${JSON.stringify(request)}: accepted`);
}
await expectResponses400({ previous_response_id: 1 }, "previous_response_id");
await expectResponses400({ conversation: { name: "conv_1" } }, "conversation");
await expectResponses400({ tools: [{ type: "web_search" }] }, "tools");
await expectResponses400({ input: [{ type: "input_image", image_url: "x" }] }, "input");
await expectResponses400({ tool_choice: { type: "function", name: "nope" }, tools: flatTools }, "tool_choice");
await expectResponses400({ max_output_tokens: 0 }, "max_output_tokens");
await expectResponses400({ input: [] }, "input");
console.log(`responses: ${JSON.stringify(asCalls(continued.output).length ? continued.output : continued.output_text)}`);
console.log("tools: ok");
