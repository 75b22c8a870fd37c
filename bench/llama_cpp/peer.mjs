// llama.cpp run through node-llama-cpp's prebuilt CPU build, for difftx's benchmarks and
// cross-engine checks (docs/BENCHMARKS.md "Against llama.cpp"). One JSON line on stdout.
//   node peer.mjs time   --model F.gguf --tokens FILE --prompt N --decode M [--threads T] [--repeats R]
//        prefill of the first N ids of FILE (whitespace-separated ids), then M greedy decode steps
//   node peer.mjs greedy --model F.gguf --tokens FILE --decode M [--threads T]
//        the greedy continuation of all ids of FILE
//   node peer.mjs probs  --model F.gguf --tokens FILE [--threads T]
//        the next-token probabilities after all ids of FILE (softmax of the logits), as
//        [[id, p], ...] for every id with p > 0
//   node peer.mjs tokenize --model F.gguf --text FILE
//        the ids llama.cpp's tokenizer gives the text of FILE (no BOS, special tokens as text)
import {readFileSync} from "node:fs";
import {pathToFileURL} from "node:url";

// bench/llama_cpp/setup installs the package into the repository's .cache/llama_cpp.
const installed = new URL("../../.cache/llama_cpp/node_modules/node-llama-cpp/dist/index.js", import.meta.url);
const {getLlama} = await import(process.env.DIFFTX_NODE_LLAMA_CPP
                                ? pathToFileURL(process.env.DIFFTX_NODE_LLAMA_CPP).href : installed.href);

const [mode, ...rest] = process.argv.slice(2);
const opts = {};
for (let i = 0; i < rest.length; i += 2) opts[rest[i].replace(/^--/, "")] = rest[i + 1];
const threads = Number(opts.threads ?? 2);
const ids = mode === "tokenize" ? [] : readFileSync(opts.tokens, "utf8").trim().split(/\s+/).map(Number);
if (!["time", "greedy", "probs", "tokenize"].includes(mode) || !opts.model || ids.some(x => !Number.isInteger(x) || x < 0))
  throw new Error("usage: peer.mjs time|greedy|probs|tokenize --model F.gguf --tokens FILE [...]; see the header");

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: opts.model, gpuLayers: 0, useMmap: true});
if (mode === "tokenize") {
  console.log(JSON.stringify({engine: "llama.cpp", tokens: [...model.tokenize(readFileSync(opts.text, "utf8"), false)]}));
  await model.dispose();
  process.exit(0);
}
const prompt = mode === "time" ? ids.slice(0, Number(opts.prompt)) : ids;
const decode = Number(opts.decode ?? 0);
const context = await model.createContext({contextSize: prompt.length + decode + 8, threads,
                                           batchSize: Math.max(prompt.length, 1), sequences: 1});
const sequence = context.getSequence();

async function run(tokens, steps) {
  const out = [];
  const t0 = performance.now();
  let t1 = t0;
  for await (const token of sequence.evaluate(tokens, {temperature: 0})) {
    if (out.length === 0) t1 = performance.now();
    out.push(token);
    if (out.length >= steps) break;
  }
  const t2 = performance.now();
  await sequence.clearHistory();
  return {tokens: out, prefill_s: (t1 - t0) / 1e3, decode_s: (t2 - t1) / 1e3};
}

if (mode === "time") {
  let best = {prefill_tok_s: 0, decode_tok_s: 0};
  await run(prompt.slice(0, 16), 4);  // warm-up: thread pool, page faults
  for (let r = 0; r < Number(opts.repeats ?? 1); ++r) {
    const t = await run(prompt, decode + 1);
    // The first yield comes after the prompt and one sampled token; the rest are decode steps.
    best.prefill_tok_s = Math.max(best.prefill_tok_s, prompt.length / t.prefill_s);
    best.decode_tok_s = Math.max(best.decode_tok_s, decode / t.decode_s);
  }
  console.log(JSON.stringify({engine: "llama.cpp", threads, prompt: prompt.length, decode, ...best}));
} else if (mode === "greedy") {
  console.log(JSON.stringify({engine: "llama.cpp", tokens: (await run(prompt, decode)).tokens}));
} else {
  const it = sequence.evaluateWithMetadata(prompt, {probabilities: true}, {temperature: 1, topK: 0, topP: 1, minP: 0});
  const first = (await it.next()).value;
  await it.return();
  console.log(JSON.stringify({engine: "llama.cpp", probabilities: [...first.probabilities.entries()]}));
}
await context.dispose();
await model.dispose();
