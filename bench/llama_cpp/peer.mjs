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
//   node peer.mjs serve  --model F.gguf --tokens FILE --prompt N --decode M --sequences S [--shared K] [--threads T]
//        S sequences of one context evaluating at once (llama.cpp batches their pending tokens
//        into one decode per step), each an N-token prompt (the first K ids of FILE shared, the
//        rest per sequence from FILE) and M greedy tokens; aggregate and decode-phase tokens/s,
//        time to first token and inter-token latency percentiles, as `difftx bench serve` reports
//   node peer.mjs predict --model F.gguf --tokens FILE --decode M (--lookup 1 | --draft D.gguf) [--draft-tokens K]
//        [--min-confidence C] [--temperature T --seed S] [--threads T] [--repeats R]: the greedy
//        (or, with --temperature, sampled) continuation of all ids of FILE without and with
//        node-llama-cpp's token predictor (input lookup, or a draft model with its minimum
//        confidence, default 0.6, drafting under the same sampling options), in turn; decode
//        tokens/s of each, the ratio, and the predictor's validated / refuted counts
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
if (!["time", "greedy", "probs", "tokenize", "serve", "predict"].includes(mode) || !opts.model || ids.some(x => !Number.isInteger(x) || x < 0))
  throw new Error("usage: peer.mjs time|greedy|probs|tokenize --model F.gguf --tokens FILE [...]; see the header");

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: opts.model, gpuLayers: 0, useMmap: true});
if (mode === "tokenize") {
  console.log(JSON.stringify({engine: "llama.cpp", tokens: [...model.tokenize(readFileSync(opts.text, "utf8"), false)]}));
  await model.dispose();
  process.exit(0);
}
if (mode === "predict") {
  await predict();
  await model.dispose();
  process.exit(0);
}
if (mode === "serve") {
  await serve();
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

function percentile(values, p) {
  if (values.length === 0) return 0;
  const v = [...values].sort((a, b) => a - b), at = p * (v.length - 1), lo = Math.floor(at);
  const hi = Math.min(lo + 1, v.length - 1);
  return v[lo] + (at - lo) * (v[hi] - v[lo]);
}

async function predict() {
  const M = Number(opts.decode), K = Number(opts["draft-tokens"] ?? 6);
  const sampling = {temperature: Number(opts.temperature ?? 0), seed: Number(opts.seed ?? 1)};
  const {InputLookupTokenPredictor, DraftSequenceTokenPredictor} = await import(
      process.env.DIFFTX_NODE_LLAMA_CPP ? pathToFileURL(process.env.DIFFTX_NODE_LLAMA_CPP).href : installed.href);
  const draftModel = opts.draft ? await llama.loadModel({modelPath: opts.draft, gpuLayers: 0, useMmap: true}) : null;
  const size = ids.length + M + 8;
  const plain = await model.createContext({contextSize: size, threads, batchSize: ids.length, sequences: 1});
  const predicted = await model.createContext({contextSize: size, threads, batchSize: ids.length, sequences: 1});
  const draftContext = draftModel
      ? await draftModel.createContext({contextSize: size, threads, batchSize: ids.length, sequences: 1}) : null;
  const predictor = draftModel
      ? new DraftSequenceTokenPredictor(draftContext.getSequence(), {
          minTokens: 0, maxTokens: K, minConfidence: Number(opts["min-confidence"] ?? 0.6)})
      : new InputLookupTokenPredictor({predictionLength: {max: K}});
  const runs = [{sequence: plain.getSequence(), best: 0},
                {sequence: predicted.getSequence({tokenPredictor: predictor}), best: 0}];
  let tokens = [];
  for (let r = 0; r <= Number(opts.repeats ?? 3); ++r)  // the first round warms up
    for (const run of runs) {
      predictor.updateInputTokens?.(ids);  // what LlamaCompletion tells an input-lookup predictor
      const out = [];
      let t1 = 0;
      for await (const token of run.sequence.evaluate(ids, sampling)) {
        if (out.length === 0) t1 = performance.now();
        out.push(token);
        if (out.length > M) break;
      }
      const rate = M / ((performance.now() - t1) / 1e3);
      if (r > 0) run.best = Math.max(run.best, rate);
      run.tokens = out;
      run.predictions = run.sequence.tokenPredictions ? {...run.sequence.tokenPredictions} : null;
      await run.sequence.clearHistory();
    }
  console.log(JSON.stringify({engine: "llama.cpp", predictor: draftModel ? "draft-sequence" : "input-lookup", threads,
                              prompt: ids.length, decode: M, draft_tokens: K, ...sampling, decode_tok_s: runs[0].best,
                              predicted_decode_tok_s: runs[1].best, speedup: runs[1].best / runs[0].best,
                              same_tokens: JSON.stringify(runs[0].tokens) === JSON.stringify(runs[1].tokens),
                              predictions: runs[1].predictions}));
}

async function serve() {
  const S = Number(opts.sequences), N = Number(opts.prompt), M = Number(opts.decode), K = Number(opts.shared ?? 0);
  const context = await model.createContext({contextSize: S * (N + M + 8), threads, sequences: S,
                                             batchSize: Math.min(512, S * N)});
  const prompts = [];
  for (let s = 0; s < S; ++s) {
    const own = [];
    for (let i = 0; own.length < N - K; ++i) own.push(ids[(K + s * (N - K) + i) % ids.length]);
    prompts.push([...ids.slice(0, K), ...own]);
  }
  const warm = context.getSequence();  // warm-up: thread pool, page faults
  for await (const _ of warm.evaluate(prompts[0].slice(0, 16), {temperature: 0})) break;
  await warm.clearHistory();
  warm.dispose();
  const sequences = prompts.map(() => context.getSequence());
  const times = prompts.map(() => []);
  const t0 = performance.now();
  await Promise.all(sequences.map(async (seq, s) => {
    for await (const _ of seq.evaluate(prompts[s], {temperature: 0})) {
      times[s].push(performance.now());
      if (times[s].length >= M) break;
    }
  }));
  const t1 = performance.now();
  const allStarted = Math.max(...times.map(t => t[0])), firstDone = Math.min(...times.map(t => t[t.length - 1]));
  let total = 0, inWindow = 0;
  const ttft = [], itl = [];
  for (const t of times) {
    total += t.length;
    ttft.push((t[0] - t0) / 1e3);
    for (let k = 1; k < t.length; ++k) itl.push((t[k] - t[k - 1]) / 1e3);
    for (const when of t) inWindow += when > allStarted && when <= firstDone;
  }
  const window = (firstDone - allStarted) / 1e3;
  console.log(JSON.stringify({engine: "llama.cpp", op: "serve_bench", threads, concurrency: S, prompt: N, new: M,
                              aggregate_tok_s: total / ((t1 - t0) / 1e3), decode_tok_s: window > 0 ? inWindow / window : 0,
                              ttft_p50_s: percentile(ttft, 0.5), ttft_p99_s: percentile(ttft, 0.99),
                              itl_p50_s: percentile(itl, 0.5), itl_p99_s: percentile(itl, 0.99)}));
  await context.dispose();
}
