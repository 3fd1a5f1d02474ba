// The coding agents themselves, run non-interactively against nanoserve: Claude Code (the
// Anthropic Messages API) and Codex (the Responses API). Their prompts are tens of thousands of tokens, so the model is
// synthesized here: a small random-weight shape with the real Qwen3 tokenizer and a 64k
// context. Its text is noise; what is checked is the exchange: the agent finishes its turn
// without a protocol error, and every request it sent was answered 200. Random weights write
// an end token once in ~20,000 tokens, and an agent takes a reply cut at max_tokens as an
// error: the server's --logit-bias makes <|im_end|> likely (replies of ~60 tokens).
//
// The machines that run this have no internet: each agent's own settings turn its other
// traffic off (telemetry, update checks, error reports), and its home is a fresh directory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binary, startServer, missingShared, sharedDir } from './serve_helpers.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tokenizer = `${sharedDir}/tokenizers/qwen3/tokenizer.json`;
let work;
let server;

function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// The log lines of requests other than health checks, from `since` on.
const requestLines = (log) => log.split('\n').filter((l) => /^(GET|POST|PUT|DELETE|HEAD|OPTIONS) /.test(l))
  .filter((l) => !l.startsWith('GET /health'));

before(async () => {
  if (missingShared) return;
  work = mkdtempSync(join(tmpdir(), 'nanoserve-agents-'));
  const model = join(work, 'agent-qwen3.gguf');
  const synth = await run(binary, ['synth', '--arch', 'qwen3', '--dims',
    'layers=2,embd=64,ff=128,heads=2,kv_heads=1,head_dim=32,vocab=151936,ctx=65536', '--type', 'Q8_0',
    '--tokenizer', tokenizer, '--out', model]);
  assert.equal(synth.code, 0, synth.stderr);
  server = await startServer(['--model', model, '-c', '65536', '--parallel', '2', '-t', '2', '--api-key', 'sk-agents',
    '--logit-bias', '151645+8']);
});

after(async () => {
  if (missingShared) return;
  assert.equal(await server.stop(), 0);
  rmSync(work, { recursive: true, force: true });
});

test('Claude Code completes a turn over the Messages API', { skip: missingShared, timeout: 300000 }, async () => {
  const home = mkdtempSync(join(work, 'claude-home-'));
  const before = requestLines(server.log()).length;
  const claude = await run(process.execPath, [`${root}node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs`,
    '-p', 'Say hello', '--model', 'nanoserve-test', '--max-turns', '1', '--output-format', 'json'], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: server.baseURL,
      ANTHROPIC_API_KEY: 'sk-agents',
      // No telemetry, update checks or error reports: the test machine has no internet.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
  });
  assert.equal(claude.code, 0, `${claude.stdout}\n${claude.stderr}`);
  const result = JSON.parse(claude.stdout);
  assert.equal(result.type, 'result');
  assert.equal(result.is_error, false, claude.stdout);
  assert.ok(result.usage.input_tokens + result.usage.cache_read_input_tokens > 5000, 'an agent-sized prompt');
  const lines = requestLines(server.log()).slice(before);
  assert.ok(lines.some((l) => l.startsWith('POST /v1/messages 200')), lines.join('\n'));
  for (const line of lines) assert.match(line, /^\S+ \S+ 200 /, line);
});

test('Codex completes a turn over the Responses API', { skip: missingShared, timeout: 300000 }, async () => {
  const home = mkdtempSync(join(work, 'codex-home-'));
  // A provider whose base URL is nanoserve; no analytics, no update check.
  writeFileSync(join(home, 'config.toml'), [
    'model = "nanoserve-test"',
    'model_provider = "nanoserve"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.nanoserve]',
    'name = "nanoserve"',
    `base_url = "${server.baseURL}/v1"`,
    'wire_api = "responses"',
    'env_key = "NANOSERVE_API_KEY"',
    '',
    '[analytics]',
    'enabled = false',
    '',
  ].join('\n'));
  const before = requestLines(server.log()).length;
  const codex = await run(`${root}node_modules/.bin/codex`, ['exec', '--skip-git-repo-check', 'Say hello'], {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, NANOSERVE_API_KEY: 'sk-agents' },
  });
  assert.equal(codex.code, 0, `${codex.stdout}\n${codex.stderr}`);
  assert.match(codex.stderr, /tokens used/, codex.stderr);
  const lines = requestLines(server.log()).slice(before);
  assert.ok(lines.some((l) => l.startsWith('POST /v1/responses 200')), lines.join('\n'));
  for (const line of lines) assert.match(line, /^\S+ \S+ 200 /, line);
});
