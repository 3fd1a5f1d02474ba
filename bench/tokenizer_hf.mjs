// The Hugging Face side of the tokenizer benchmark: the same chunks, the same JSON line as
// tokenizer_bench.cpp, measured on the Rust `tokenizers` crate through its official Node
// binding (npm `tokenizers`, pinned in package.json). Run it single-threaded:
//   RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false \
//     node bench/tokenizer_hf.mjs TOKENIZER_JSON CORPUS [CHUNK_BYTES=65536] [RUNS=5]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const { version } = require('tokenizers/package.json');

const [tokenizerJson, corpusPath, chunkArg, runsArg] = process.argv.slice(2);
if (!corpusPath) {
  console.error('usage: node bench/tokenizer_hf.mjs TOKENIZER_JSON CORPUS [CHUNK_BYTES=65536] [RUNS=5]');
  process.exit(2);
}
const chunkBytes = Number(chunkArg ?? 65536);
const runs = Number(runsArg ?? 5);

// Chunk boundaries as in tokenizer_bench.cpp: the first '\n' at or after every chunkBytes bytes.
const corpus = readFileSync(corpusPath);
const chunks = [];
for (let begin = 0; begin < corpus.length;) {
  const newline = corpus.indexOf(0x0a, begin + chunkBytes);
  const end = newline < 0 ? corpus.length : newline + 1;
  chunks.push(corpus.subarray(begin, end).toString('utf8'));
  begin = end;
}

const tokenizer = Tokenizer.fromFile(tokenizerJson);
const options = { addSpecialTokens: false };

// Only the encode() calls are timed; the ids are counted and hashed afterwards.
let bestSeconds = Infinity;
let encodings = [];
for (let run = 0; run < runs; run++) {
  encodings = [];
  const start = process.hrtime.bigint();
  for (const chunk of chunks) encodings.push(await tokenizer.encode(chunk, null, options));
  bestSeconds = Math.min(bestSeconds, Number(process.hrtime.bigint() - start) / 1e9);
}

// FNV-1a over the little-endian bytes of every id, as tokenizer_bench.cpp computes it.
let tokens = 0;
let hash = 0xcbf29ce484222325n;
const mask = (1n << 64n) - 1n;
for (const encoding of encodings) {
  const ids = encoding.getIds();
  tokens += ids.length;
  for (const id of ids) {
    for (let shift = 0; shift < 32; shift += 8) {
      hash ^= BigInt((id >>> shift) & 0xff);
      hash = (hash * 0x100000001b3n) & mask;
    }
  }
}

console.log(JSON.stringify({
  impl: `hf-tokenizers-${version}`,
  bytes: corpus.length,
  chunks: chunks.length,
  tokens,
  ids_fnv1a: hash.toString(16).padStart(16, '0'),
  best_seconds: Number(bestSeconds.toFixed(4)),
  mb_per_s: Number((corpus.length / 1e6 / bestSeconds).toFixed(2)),
}));
