// Starts `nanoserve serve` for the node tests: the binary is build/nanoserve (or
// $NANOSERVE_BINARY); it listens on a free port, read from its "listening on" log line.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const binary = process.env.NANOSERVE_BINARY ?? `${root}build/nanoserve`;
export const sharedDir = process.env.NANOSERVE_SHARED_DIR || `${root}../shared`;
export const tinyModel = `${sharedDir}/golden/models/tiny-qwen3-Q8_0.gguf`;
// Random weights with Qwen3's vocabulary and chat template (tools, <think>).
export const qwen3VocabModel = `${sharedDir}/golden/models/qwen3vocab-qwen3-Q8_0.gguf`;

// Why the tests that need ../shared are skipped, or false when they run. Under CI=true or
// NANOSERVE_REQUIRE_SHARED=1 (make check) they run, and fail when the file is missing.
export const required = process.env.CI === 'true' || process.env.NANOSERVE_REQUIRE_SHARED === '1';
export const missingShared = !required && !existsSync(tinyModel) && `missing test data ${tinyModel}`;

// The start of the mock engine's passage (src/engine/mock_engine.cpp): greedy text begins so.
export const mockPassageStart =
  'The lighthouse keeper climbed the spiral stairs at dusk, counting all one hundred and twelve steps as he always did.';

// A server whose mock engine answers each request with its own prompt (--mock-echo), as the model's
// chat template rendered it: what reached the model, end to end through an API.
export const echoServerArgs = (model) => ['--engine', 'mock', '--mock-echo', '--model', model];
// How Qwen3's chat template renders a tool's result in the prompt.
export const qwen3ToolResult = (content) => `<tool_response>\n${content}\n</tool_response>`;

// Greedy text of `tokens` tokens from the mock engine: the passage's start, at least a character a
// token (its first sentence is ASCII), so an empty or truncated answer fails.
export function assertPassageStart(text, tokens) {
  if (typeof text !== 'string' || text.length < tokens || !mockPassageStart.startsWith(text))
    throw new assert.AssertionError({ message: `expected the mock passage's first ${tokens} tokens, got ${JSON.stringify(text)}` });
}

export async function startServer(args) {
  const child = spawn(binary, ['serve', '--host', '127.0.0.1', '--port', '0', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => { log += text; });
  const exited = new Promise((resolve) => child.once('exit', resolve));

  let port;
  for (const deadline = Date.now() + 30000; !port; await sleep(5)) {
    port = log.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1];
    if (child.exitCode !== null) throw new Error(`nanoserve exited (${child.exitCode}):\n${log}`);
    if (Date.now() > deadline) throw new Error(`nanoserve did not listen:\n${log}`);
  }
  const baseURL = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60000; ; await sleep(10)) {
    const health = await fetch(`${baseURL}/health`).catch(() => null);
    if (health?.status === 200) break;
    if (Date.now() > deadline) throw new Error(`nanoserve is not ready:\n${log}`);
  }
  return {
    baseURL,
    pid: child.pid,
    log: () => log,
    // SIGTERM; resolves to the exit code.
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

// The value of an unlabelled sample of /metrics (with the server's API key, where it has one).
export async function metric(baseURL, name, apiKey) {
  const headers = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
  const text = await (await fetch(`${baseURL}/metrics`, { headers })).text();
  const m = text.match(new RegExp(`^${name} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}

export async function waitForMetric(baseURL, name, value, timeoutMs = 60000) {
  const start = Date.now();
  while ((await metric(baseURL, name)) !== value) {
    if (Date.now() - start > timeoutMs) throw new Error(`${name} did not reach ${value}`);
    await sleep(5);
  }
  return Date.now() - start;
}
