// The tokenizer oracle: encodes a varied corpus with transformers.js (npm @lenml/tokenizers,
// fetched by scripts/fetch-data into DATA/hf/lenml-tokenizers) and writes, for each text, the
// ids without and with the post-processor's special tokens and the decoded text. difftx's
// tests compare their own encoding of the same texts with it (tests/data/hf_tokenizer_test.cpp).
//
//   node tools/tokenizer_oracle/encode.mjs TOKENIZER_DIR OUT.json [CORPUS.json]
//
// TOKENIZER_DIR holds tokenizer.json (and tokenizer_config.json). Without CORPUS.json (a JSON
// array of strings) the built-in corpus below is encoded.
import fs from "node:fs";
import path from "node:path";
import url from "node:url";

const here = path.dirname(url.fileURLToPath(import.meta.url));
const data = process.env.DIFFTX_DATA ?? path.join(here, "..", "..", "data");
const { TokenizerLoader } = await import(
  url.pathToFileURL(path.join(data, "hf", "lenml-tokenizers", "dist", "main.mjs")).href
);

// Text that exercises every part of a byte-level BPE tokenizer: scripts and normalization,
// whitespace runs (up to 10,000 spaces), digits, contractions, code, special-token text.
export function corpus() {
  const texts = [
    "Hello world",
    "Hello, world! How are you doing today?",
    "I'm sure you'll see they've said it's what we'd do; I'M SURE YOU'LL, We'Re, THEY'VE",
    "don't can't won't shouldn't y'all 'tis rock'n'roll",
    "1 12 123 1234 12345 123456 1234567 3.14159 -42 1e10 0x1F 1,000,000",
    "٣٤٥ ๑๒๓ 一二三 ½ ² Ⅻ",
    "Ünïcödé naïve café résumé Zürich São Paulo",
    "e\u0301 a\u0300 n\u0303 (combining marks: NFC composes them)",
    "\u00c5 \u212b \u0041\u030a (three spellings of the Swedish A-ring)",
    "한국어 \u1100\u1161\u11a8 hangul jamo",
    "你好，世界！这是一个测试。",
    "日本語のテキストとカタカナ、ひらがな。",
    "Привет, мир! Ελληνικά. עברית. العربية. हिन्दी.",
    "emoji 😀😃😄 👨‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇯🇵",
    "tabs\tand\ttabs\t\tand\nnewlines\n\n\nand\r\nwindows\r\n",
    "  leading spaces and trailing spaces   ",
    " ",
    "\n",
    "a  b   c    d     e",
    " ".repeat(10000),
    "x" + " ".repeat(1000) + "y",
    "\n".repeat(300),
    "a".repeat(3000),
    "def f(x):\n    return x ** 2  # square\n\nclass A:\n    pass\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "<html><body><p class=\"x\">Hi &amp; bye</p></body></html>",
    "https://example.com/path?query=1&b=2#frag user@example.org",
    "$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$",
    "<|begin_of_text|>Hello<|end_of_text|>",
    "<|endoftext|>text<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    "<think>\nreasoning\n</think>\n\nanswer <tool_call>{}</tool_call>",
    "<|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>",
    "<|begin_of_text|><|begin_of_text|> <|end_of_text|>  <|reserved_special_token_5|>",
    "<|notatoken|> <| begin_of_text |> <|begin_of_text <|im_start",
    "\ufeffbyte order mark \u200b zero width \u00a0 nbsp \u3000 ideographic space",
    "\u2028line separator\u2029paragraph separator\u0085next line",
    "replacement \ufffd char, private use \ue000, noncharacter \ufdd0",
    "control \u0001\u0002\u001f\u007f chars",
    "mixedCASE camelCaseIdentifiers snake_case_names SCREAMING_CASE",
    "'s 's's ''s '' ' '''' \"quoted\" 'single'",
    "!!!??? ... --- *** ___ === +++ ~~~ ``` ",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕄𝕒𝕥𝕙 𐍈 𓀀 (astral planes)",
    "The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX.",
    "Ǆ ǅ ǆ ß ẞ ſ K İ ı (case folding)",
    "'ſ 'K 'ß",
  ];
  return texts;
}

async function main() {
  const [dir, out, corpusFile] = process.argv.slice(2);
  if (!dir || !out) {
    console.error("usage: node encode.mjs TOKENIZER_DIR OUT.json [CORPUS.json]");
    process.exit(2);
  }
  const read = (f) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"));
  const config = fs.existsSync(path.join(dir, "tokenizer_config.json")) ? read("tokenizer_config.json") : {};
  const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON: read("tokenizer.json"), tokenizerConfig: config });
  const texts = corpusFile ? JSON.parse(fs.readFileSync(corpusFile, "utf8")) : corpus();
  const cases = texts.map((text) => {
    const ids = tokenizer.encode(text, { add_special_tokens: false });
    return {
      text,
      ids,
      ids_with_template: tokenizer.encode(text, { add_special_tokens: true }),
      decoded: tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
    };
  });
  fs.writeFileSync(out, JSON.stringify({ oracle: "@lenml/tokenizers 3.7.2 (transformers.js)", cases }) + "\n");
}

await main();
