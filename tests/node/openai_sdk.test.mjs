// The official openai SDK against `nanoserve serve --engine mock`: what a real client sees.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer, tinyModel, missingShared, assertPassageStart, metric, waitForMetric } from './serve_helpers.mjs';

let server;
let client;
const model = 'tiny';
const messages = [{ role: 'user', content: 'Tell me a story.' }];

before(async () => {
  if (missingShared) return;
  server = await startServer(['--engine', 'mock', '--model', tinyModel, '--mock-token-delay-us', '2000']);
  client = new OpenAI({ baseURL: `${server.baseURL}/v1`, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  if (missingShared) return;
  assert.equal(await server.stop(), 0);
});

test('non-streaming chat completion', { skip: missingShared }, async () => {
  const r = await client.chat.completions.create({ model, messages, temperature: 0, max_tokens: 12 });
  assert.match(r.id, /^chatcmpl-/);
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, 'assistant');
  assertPassageStart(r.choices[0].message.content, 12);
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage.completion_tokens, 12);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + 12);
  assert.equal(typeof r.nanoserve.ttft_ms, 'number');
});

test('streaming chat with include_usage', { skip: missingShared }, async () => {
  const whole = await client.chat.completions.create({ model, messages, temperature: 0, max_tokens: 12 });
  const stream = await client.chat.completions.create({
    model, messages, temperature: 0, max_tokens: 12, stream: true, stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
  const last = chunks.at(-1);
  assert.deepEqual(last.choices, []);
  assert.equal(last.usage.completion_tokens, 12);
  assert.equal(typeof last.nanoserve.decode_tok_s, 'number');
  assert.equal(chunks.at(-2).choices[0].finish_reason, 'length');
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  assert.equal(text, whole.choices[0].message.content);
});

test('stop sequences end the text and are not returned', { skip: missingShared }, async () => {
  const expected = 'The lighthouse ';
  const r = await client.chat.completions.create({ model, messages, temperature: 0, max_tokens: 40, stop: ['keeper'] });
  assert.equal(r.choices[0].message.content, expected);
  assert.equal(r.choices[0].finish_reason, 'stop');
  const stream = await client.chat.completions.create({
    model, messages, temperature: 0, max_tokens: 40, stop: 'keeper', stream: true,
  });
  let text = '';
  let finish;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(text, expected);
  assert.equal(finish, 'stop');
});

test('text completion and model list', { skip: missingShared }, async () => {
  const r = await client.completions.create({ model, prompt: 'Once upon a time', temperature: 0, max_tokens: 6 });
  assert.equal(r.object, 'text_completion');
  assertPassageStart(r.choices[0].text, 6);
  assert.equal(r.usage.completion_tokens, 6);
  const models = [];
  for await (const m of client.models.list()) models.push(m);
  assert.equal(models.length, 1);
  assert.equal(models[0].owned_by, 'nanoserve');
});

test('an aborted stream cancels its generation', { skip: missingShared }, async () => {
  const before = (await metric(server.baseURL, 'nanoserve_request_cancellations_total')) ?? 0;
  const stream = await client.chat.completions.create({ model, messages, max_tokens: 2000, stream: true });
  let chunks = 0;
  // Chunks the SDK had already parsed may still come out of the iterator after an abort: leave
  // the loop at once.
  for await (const _ of stream) {
    if (++chunks === 5) {
      stream.controller.abort();
      break;
    }
  }
  assert.equal(chunks, 5);
  await waitForMetric(server.baseURL, 'nanoserve_request_cancellations_total', before + 1);
  await waitForMetric(server.baseURL, 'nanoserve_requests_running', 0);
  assert.equal((await fetch(`${server.baseURL}/health`)).status, 200);
  assert.match(server.log(), /cancelled \(client disconnected\)/);
});

test('an invalid request surfaces as BadRequestError', { skip: missingShared }, async () => {
  await assert.rejects(client.chat.completions.create({ model, messages: [] }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError, `got ${e?.constructor?.name}`);
    assert.equal(e.status, 400);
    assert.equal(e.type, 'invalid_request_error');
    assert.equal(e.param, 'messages');
    return true;
  });
  await assert.rejects(client.chat.completions.create({ model, messages, max_tokens: 0 }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.param, 'max_tokens');
    return true;
  });
});

// A body past the server's limit (8 MB) is answered 413 before it is read, and the rest the SDK
// still sends is read and dropped before the connection closes (lingering close): the SDK, which
// sends the whole body before it reads, gets the 413 and the API's JSON error every time, not a
// reset connection.
test('a 40 MB body gets a 413 with the JSON error, every time', { skip: missingShared }, async () => {
  const big = 'a'.repeat(40 << 20);
  for (let i = 0; i < 20; i++) {
    await assert.rejects(
      client.chat.completions.create({ model, messages: [{ role: 'user', content: big }], max_tokens: 1 }),
      (e) => e.status === 413 && typeof e.error?.message === 'string' && e.error.message.includes('limit'),
      `request ${i}`);
  }
  const r = await client.chat.completions.create({ model, messages, max_tokens: 2 });  // the server is fine
  assert.equal(r.choices.length, 1);
});
