#!/usr/bin/env node
// Server overhead, measured (not a test): `nanoserve serve --engine mock` with no token
// delay, N streaming chat requests of 64 tokens one after another; for each, the time the
// client observed minus the engine's own clock (the `nanoserve` object of the last chunk):
//   total:  request sent -> [DONE] received,  minus  the engine's ttft + decode time
//   ttft:   request sent -> first text chunk, minus  the engine's ttft_ms
// What is left is HTTP, JSON parsing, templating, tokenizing, SSE framing and the client.
//
// Usage: node scripts/server-overhead.mjs [REQUESTS=200]   (binary: build/nanoserve or $NANOSERVE_BINARY)
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startServer, tinyModel } from '../tests/node/serve_helpers.mjs';

const requests = Number(process.argv[2] ?? 200);
const warmup = 10;
const tokens = 64;

const server = await startServer(['--engine', 'mock', '--model', tinyModel, '--mock-token-delay-us', '0']);
const body = JSON.stringify({
  model: 'mock',
  messages: [{ role: 'user', content: 'Tell me about the lighthouse.' }],
  max_tokens: tokens,
  ignore_eos: true,
  temperature: 0,
  stream: true,
});

// node:http with one kept-alive connection: less client time in the figures than fetch.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post() {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.baseURL}/v1/chat/completions`, {
      method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

async function oneRequest() {
  const start = performance.now();
  const res = await post();
  res.setEncoding('utf8');
  let buffered = '';
  let firstText;
  let engine;
  for await (const text of res) {
    buffered += text;
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const data = buffered.slice(6, end);  // after "data: "
      buffered = buffered.slice(end + 2);
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data);
      if (firstText === undefined && chunk.choices[0]?.delta?.content) firstText = performance.now();
      if (chunk.nanoserve) engine = chunk.nanoserve;
    }
  }
  const total = performance.now() - start;
  // decode_tok_s is (n - 1) / (first -> last token); with no delay it can be huge or null.
  const decodeMs = engine.decode_tok_s > 0 ? ((tokens - 1) / engine.decode_tok_s) * 1000 : 0;
  return { total: total - (engine.ttft_ms + decodeMs), ttft: firstText - start - engine.ttft_ms, clientTotal: total };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

for (let i = 0; i < warmup; ++i) await oneRequest();
const results = [];
for (let i = 0; i < requests; ++i) results.push(await oneRequest());
agent.destroy();
await server.stop();

const row = (name, key) => {
  const values = results.map((r) => r[key]);
  console.log(`${name.padEnd(34)} p50 ${percentile(values, 50).toFixed(3)} ms   p99 ${percentile(values, 99).toFixed(3)} ms`);
};
console.log(`${requests} streaming requests of ${tokens} tokens, mock engine with no delay, one at a time`);
row('client total', 'clientTotal');
row('overhead: total - engine clock', 'total');
row('overhead: TTFT - engine ttft_ms', 'ttft');
