// A load test of `difftx serve` with the openai client: CLIENTS concurrent clients for SECONDS,
// each sending streamed and whole completions of random lengths, aborting some mid-stream
// (AbortController) and mixing in bad requests. It fails on any 5xx other than an intended 503
// (a full queue) and on a bad request that is not a 4xx; it prints a JSON summary: requests by
// outcome, generated tokens per second, latency and time-to-first-token percentiles.
//
//   node tools/serve_client/load.mjs BASE_URL CLIENTS SECONDS [SEED]
import OpenAI from "openai";

const [baseURL, clientsArg, secondsArg, seedArg] = process.argv.slice(2);
const clients = Number(clientsArg), seconds = Number(secondsArg);
const client = new OpenAI({ baseURL, apiKey: "none", maxRetries: 0, timeout: 120000 });
const model = (await client.models.list()).data[0].id;

// A small seeded generator (mulberry32), so that a run's mix of requests is repeatable.
let state = Number(seedArg ?? 1) >>> 0;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(random() * list.length)];
const prompts = ["The Congress", "The state of the Union", "We the people", "In the year", "The President shall",
                 "Our foreign relations", "The Treasury reports"];
const bad = [
  { prompt: "x", temperature: -1 }, { prompt: "x", max_tokens: "many" }, { prompt: 12 }, { prompt: "x", n: 0 },
  { prompt: "x", echo: true, max_tokens: -1 }, { prompt: "x", top_p: 7 }, { prompt: "x", logit_bias: { "1": 500 } }, { messages: 3 },
];

const counts = { ok: 0, aborted: 0, bad_rejected: 0, busy_503: 0, unexpected: 0 };
const latencies = [], ttfts = [], failures = [];
let tokens = 0;

async function one() {
  const r = random();
  const start = performance.now();
  if (r < 0.1) {
    try {
      await client.completions.create({ model, ...pick(bad) });
      counts.unexpected++;
      failures.push("a bad request was accepted");
    } catch (e) {
      if (e.status >= 400 && e.status < 500) counts.bad_rejected++;
      else if (e.status === 503) counts.busy_503++;
      else { counts.unexpected++; failures.push(`bad request: ${e.status} ${e.message}`); }
    }
    return;
  }
  const controller = new AbortController();
  const abortAfter = random() < 0.2 ? random() * 400 : null;
  if (abortAfter !== null) setTimeout(() => controller.abort(), abortAfter);
  const request = { model, prompt: pick(prompts), max_tokens: 8 + Math.floor(random() * 56), temperature: 0.8,
                    seed: Math.floor(random() * 1e6) };
  try {
    if (r < 0.7) {
      const stream = await client.completions.create({ ...request, stream: true, stream_options: { include_usage: true } },
                                                     { signal: controller.signal });
      let first = null, usage = null;
      for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        if (first === null && chunk.choices.length) first = performance.now();
      }
      tokens += usage.completion_tokens;
      if (first !== null) ttfts.push(first - start);
    } else {
      const whole = await client.completions.create(request, { signal: controller.signal });
      tokens += whole.usage.completion_tokens;
    }
    latencies.push(performance.now() - start);
    counts.ok++;
  } catch (e) {
    if (controller.signal.aborted) counts.aborted++;
    else if (e.status === 503) {
      counts.busy_503++;
      await new Promise((resolve) => setTimeout(resolve, 50 + random() * 200));  // back off, as Retry-After asks
    } else { counts.unexpected++; failures.push(`${e.status ?? e.name}: ${e.message}`); }
  }
}

const started = performance.now();
const deadline = started + seconds * 1000;
await Promise.all(Array.from({ length: clients }, async () => {
  while (performance.now() < deadline) await one();
}));
const elapsed = (performance.now() - started) / 1000;
const percentile = (list, p) => {
  if (!list.length) return null;
  const sorted = [...list].sort((x, y) => x - y);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]);
};
const summary = {
  clients, seconds: Math.round(elapsed * 10) / 10, ...counts, generated_tokens: tokens,
  tokens_per_second: Math.round(tokens / elapsed * 10) / 10,
  requests_per_second: Math.round(counts.ok / elapsed * 100) / 100,
  latency_ms: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
  ttft_ms: { p50: percentile(ttfts, 0.5), p99: percentile(ttfts, 0.99) },
  failures: failures.slice(0, 10),
};
console.log(JSON.stringify(summary));
process.exit(counts.unexpected === 0 && counts.ok > 0 ? 0 : 1);
