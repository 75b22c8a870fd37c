// The official openai client against `difftx serve`: completions and chat completions, whole and
// streamed, n choices with seeds, logprobs, a scored prompt (echo, prompt_logprobs), usage, and
// errors as the client's typed exceptions.
// Greedy requests must give the same text streamed and whole.
//
//   node tools/serve_client/api_check.mjs BASE_URL [API_KEY]     (BASE_URL: http://HOST:PORT/v1)
import assert from "node:assert/strict";
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: apiKey || "none", maxRetries: 0 });

const models = await client.models.list();
const model = models.data[0].id;
console.log(`model: ${model}`);

async function collect(stream, pick) {
  const texts = [];
  let usage = null, finish = [], first = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      first ??= chunk;
      texts[choice.index] = (texts[choice.index] ?? "") + (pick(choice) ?? "");
      if (choice.finish_reason) finish[choice.index] = choice.finish_reason;
    }
  }
  return { texts, usage, finish, first };
}

// Completions.
const prompt = "The Congress";
const whole = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0 });
assert.equal(whole.object, "text_completion");
assert.equal(whole.choices.length, 1);
assert.ok(["stop", "length"].includes(whole.choices[0].finish_reason));
assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + whole.usage.completion_tokens);
assert.ok(whole.usage.completion_tokens >= 1 && whole.usage.completion_tokens <= 16);
const streamed = await collect(
  await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0, stream: true,
                                    stream_options: { include_usage: true } }),
  (c) => c.text);
assert.equal(streamed.texts[0], whole.choices[0].text, "greedy: streamed text differs from the whole response");
// The counts; a request sent again may find its prompt's blocks cached (prompt_tokens_details).
const counts = (u) => [u.prompt_tokens, u.completion_tokens, u.total_tokens];
assert.deepEqual(counts(streamed.usage), counts(whole.usage));
assert.equal(streamed.finish[0], whole.choices[0].finish_reason);
console.log(`completion: ${JSON.stringify(whole.choices[0].text)} (${whole.usage.completion_tokens} tokens)`);

// vLLM's stop_reason: the stop string that ended the text, whole and streamed; the stop_token_ids
// id that did; null for the end of sequence or the length.
const text = whole.choices[0].text;
const at = [...Array(Math.max(0, text.length - 3)).keys()].find((k) => k > 0 && text.indexOf(text.slice(k, k + 2)) === k);
if (at !== undefined) {
  const stop = text.slice(at, at + 2);
  const cut = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0, stop: ["\u0001", stop] });
  assert.deepEqual([cut.choices[0].text, cut.choices[0].finish_reason, cut.choices[0].stop_reason], [text.slice(0, at), "stop", stop]);
  const ends = [];
  for await (const chunk of await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0, stop: [stop],
                                                               stream: true }))
    for (const c of chunk.choices) if (c.finish_reason) ends.push([c.finish_reason, c.stop_reason]);
  assert.deepEqual(ends, [["stop", stop]], "the streamed stop_reason");
  console.log(`stop_reason: ${JSON.stringify(stop)}`);
}
if (whole.choices[0].finish_reason === "length") assert.equal(whole.choices[0].stop_reason, null);
const first = await client.completions.create({ model, prompt, max_tokens: 1, temperature: 0, logprobs: 1 });
const firstIds = (await (await fetch(baseURL.replace(/\/v1$/, "") + "/tokenize", {
  method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey || "none"}` },
  body: JSON.stringify({ content: first.choices[0].logprobs.tokens[0] }) })).json()).tokens;
if (firstIds.length === 1) {
  const stopped = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0, stop_token_ids: firstIds });
  assert.deepEqual([stopped.choices[0].text, stopped.choices[0].finish_reason, stopped.choices[0].stop_reason],
                   ["", "stop", firstIds[0]],
                   "stop_token_ids: the id is the stop_reason");
  console.log(`stop_reason: token ${firstIds[0]}`);
}

// n choices with a seed: reproducible, and choice i is seeded seed + i (so they differ).
const seeded = (seed) => client.completions.create({ model, prompt, max_tokens: 12, temperature: 1, seed, n: 3 });
const a = await seeded(5), b = await seeded(5);
assert.equal(a.choices.length, 3);
assert.deepEqual(a.choices.map((c) => c.text), b.choices.map((c) => c.text));
assert.ok(new Set(a.choices.map((c) => c.text)).size > 1, "three seeded choices are all the same");
const shifted = await client.completions.create({ model, prompt, max_tokens: 12, temperature: 1, seed: 6 });
assert.equal(shifted.choices[0].text, a.choices[1].text, "choice 1 of seed 5 is not seed 6's");

// Legacy logprobs.
const lp = await client.completions.create({ model, prompt, max_tokens: 6, temperature: 0, logprobs: 3 });
const logprobs = lp.choices[0].logprobs;
assert.ok(logprobs.tokens.length >= 1 && logprobs.tokens.length <= lp.usage.completion_tokens);
assert.equal(logprobs.token_logprobs.length, logprobs.tokens.length);
assert.equal(logprobs.text_offset[0], prompt.length);
for (let i = 0; i < logprobs.tokens.length; i++) {
  assert.ok(logprobs.token_logprobs[i] <= 0);
  const top = Object.values(logprobs.top_logprobs[i]);
  assert.ok(top.length >= 1 && top.length <= 3);
  assert.ok(Math.abs(Math.max(...top) - logprobs.token_logprobs[i]) < 1e-4, "greedy token is not the likeliest");
}

// usage.prompt_tokens_details.cached_tokens: a prompt sent again finds its full blocks cached.
const long = "The Congress of the United States shall assemble at least once in every year. ".repeat(4);
const firstTime = await client.completions.create({ model, prompt: long, max_tokens: 1, temperature: 0 });
const again = await client.completions.create({ model, prompt: long, max_tokens: 1, temperature: 0 });
assert.equal(firstTime.usage.prompt_tokens_details.cached_tokens, 0);
assert.ok(again.usage.prompt_tokens_details.cached_tokens >= 32, JSON.stringify(again.usage));
assert.ok(again.usage.prompt_tokens_details.cached_tokens < again.usage.prompt_tokens);

// Scoring a text, as evaluation harnesses do (lm-evaluation-harness's completions model): the
// prompt as token ids, echo with logprobs and one greedy token. The text and the logprobs start
// with the prompt's, the first token with none. vLLM's prompt_logprobs of the prompt with one more
// token score that position as the draw saw it: its likeliest token is the greedy one.
const root = baseURL.replace(/\/v1\/?$/, "");
const ids = (await (await fetch(`${root}/tokenize`, { method: "POST", body: JSON.stringify({ content: "The Congress of the Union" }) })).json()).tokens;
const scored = await client.completions.create({ model, prompt: [ids], max_tokens: 1, temperature: 0, echo: true, logprobs: 1 });
const echoed = scored.choices[0].logprobs;
assert.equal(echoed.tokens.length, ids.length + 1);
assert.equal(echoed.token_logprobs[0], null);
assert.equal(echoed.top_logprobs[0], null);
assert.ok(scored.choices[0].text.startsWith("The Congress of the Union"), scored.choices[0].text);
for (let i = 1; i < echoed.tokens.length; i++) {
  assert.ok(echoed.token_logprobs[i] <= 0);
  assert.equal(echoed.top_logprobs[i][echoed.tokens[i]], echoed.token_logprobs[i], `the prompt's token ${i} among its alternatives`);
}
const next = await client.completions.create({ model, prompt: [[...ids, ids[0]]], max_tokens: 0, echo: true, prompt_logprobs: 3 });
const last = next.choices[0].prompt_logprobs.at(-1);
assert.equal(next.choices[0].prompt_logprobs.length, ids.length + 1);
assert.equal(next.choices[0].prompt_logprobs[0], null);
assert.equal(next.usage.completion_tokens, 0);
const best = Object.values(last).find((e) => e.rank === 1);
assert.equal(best.decoded_token, echoed.tokens.at(-1), "the greedy token is not the scored position's likeliest");
assert.ok(Math.abs(best.logprob - echoed.token_logprobs.at(-1)) < 2e-3, `${best.logprob} vs ${echoed.token_logprobs.at(-1)}`);
// Each earlier position's score is the echo's.
for (let i = 1; i < ids.length; i++)
  assert.equal(next.choices[0].prompt_logprobs[i][String(ids[i])].logprob, echoed.token_logprobs[i]);
// vLLM's truncate_prompt_tokens: the prompt keeps its last 3 tokens (the echo shows them).
const cut = await client.completions.create({ model, prompt: [ids], max_tokens: 0, echo: true, truncate_prompt_tokens: 3 });
assert.equal(cut.usage.prompt_tokens, 3);
assert.ok("The Congress of the Union".endsWith(cut.choices[0].text), cut.choices[0].text);
const echoStream = await collect(
  await client.completions.create({ model, prompt: [ids], max_tokens: 1, temperature: 0, echo: true, stream: true }),
  (c) => c.text);
assert.equal(echoStream.texts[0], scored.choices[0].text);
console.log(`scored: ${ids.length} prompt tokens, then ${JSON.stringify(echoed.tokens.at(-1))}`);

// Chat completions (the server has a chat template for this check).
const messages = [{ role: "system", content: "You are brief." }, { role: "user", content: "Tell me about the Union." }];
const chat = await client.chat.completions.create({ model, messages, max_tokens: 16, temperature: 0, logprobs: true, top_logprobs: 2 });
assert.equal(chat.object, "chat.completion");
assert.equal(chat.choices[0].message.role, "assistant");
assert.equal(chat.choices[0].logprobs.content[0].top_logprobs.length, 2);
const chatStream = await collect(
  await client.chat.completions.create({ model, messages, max_completion_tokens: 16, temperature: 0, stream: true,
                                         stream_options: { include_usage: true } }),
  (c) => c.delta.content);
assert.equal(chatStream.first.choices[0].delta.role, "assistant");
assert.equal(chatStream.texts[0], chat.choices[0].message.content);
assert.deepEqual(counts(chatStream.usage), counts(chat.usage));
console.log(`chat: ${JSON.stringify(chat.choices[0].message.content)}`);
// vLLM's prompt_logprobs on a chat completion: on the response, one per prompt token.
const chatScored = await client.chat.completions.create({ model, messages, max_tokens: 1, prompt_logprobs: 0 });
assert.equal(chatScored.prompt_logprobs.length, chatScored.usage.prompt_tokens);
assert.equal(chatScored.prompt_logprobs[0], null);
assert.ok(chatScored.prompt_logprobs.slice(1).every((p) => Object.keys(p).length === 1));

// Errors come back as the client's typed errors with OpenAI's fields.
async function expectError(request, status, param) {
  try {
    await request();
  } catch (e) {
    assert.ok(e instanceof OpenAI.APIError, `not an APIError: ${e}`);
    assert.equal(e.status, status, e.message);
    if (param) assert.equal(e.param, param, e.message);
    return;
  }
  assert.fail(`no error (expected ${status})`);
}
await expectError(() => client.completions.create({ model: "no-such-model", prompt, max_tokens: 4 }), 404, "model");
await expectError(() => client.completions.create({ model, prompt, temperature: 5 }), 400, "temperature");
await expectError(() => client.completions.create({ model, prompt, max_tokens: 0 }), 400, "max_tokens");
await expectError(() => client.completions.create({ model, prompt, prompt_logprobs: 1, stream: true }), 400, "prompt_logprobs");
await expectError(() => client.completions.create({ model, prompt, prompt_logprobs: -1 }), 400, "prompt_logprobs");
await expectError(() => client.chat.completions.create({ model, messages, tools: [{ type: "function", function: { name: "f" } }] }), 400, "tools");
console.log("openai client: ok");
