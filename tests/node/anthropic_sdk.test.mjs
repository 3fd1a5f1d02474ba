// The official @anthropic-ai/sdk against nanoserve's Messages API: what Claude Code and other
// Anthropic clients see. Text comes from the mock engine (a known passage); tools from a model
// with Qwen3's vocabulary and chat template (random weights, held to the tool's schema).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import Ajv from 'ajv';
import { startServer, tinyModel, qwen3VocabModel, missingShared, assertPassageStart, echoServerArgs, qwen3ToolResult }
  from './serve_helpers.mjs';

let mock;
let qwen3;
let echo;
const key = 'sk-test-anthropic';
const messages = [{ role: 'user', content: 'Tell me a story.' }];
const client = (server, apiKey = key) => new Anthropic({ baseURL: server.baseURL, apiKey, maxRetries: 0 });

before(async () => {
  if (missingShared) return;
  mock = await startServer(['--engine', 'mock', '--model', tinyModel, '--mock-token-delay-us', '1000',
    '--api-key', key]);
  qwen3 = await startServer(['--model', qwen3VocabModel, '-t', '2', '--api-key', key]);
  echo = await startServer([...echoServerArgs(qwen3VocabModel), '--api-key', key]);
});

after(async () => {
  if (missingShared) return;
  assert.equal(await mock.stop(), 0);
  assert.equal(await echo.stop(), 0);
  assert.equal(await qwen3.stop(), 0);
  // Every request the SDK sent was understood: no 5xx in either log.
  for (const s of [mock, qwen3]) assert.doesNotMatch(s.log(), /^POST \S+ 5\d\d /m);
});

test('a message, whole: text, stop_reason, usage (the key sent as x-api-key)', { skip: missingShared }, async () => {
  const m = await client(mock).messages.create({ model: 'tiny', max_tokens: 12, temperature: 0, messages,
    system: [{ type: 'text', text: 'You are terse.' }], metadata: { user_id: 'u1' } });
  assert.match(m.id, /^msg_/);
  assert.equal(m.type, 'message');
  assert.equal(m.role, 'assistant');
  assert.equal(m.content.length, 1);
  assert.equal(m.content[0].type, 'text');
  assertPassageStart(m.content[0].text, 12);
  assert.equal(m.stop_reason, 'max_tokens');
  assert.equal(m.stop_sequence, null);
  assert.equal(m.usage.output_tokens, 12);
  assert.ok(m.usage.input_tokens + m.usage.cache_read_input_tokens > 0);
  assert.equal(typeof m.nanoserve.ttft_ms, 'number');
});

test('a message, streamed: the exact event sequence, and the same text', { skip: missingShared }, async () => {
  const c = client(mock);
  const body = { model: 'tiny', max_tokens: 12, temperature: 0, messages };
  const whole = await c.messages.create(body);
  // The wire, as sent (the SDK's iterator drops pings).
  const wire = await fetch(`${mock.baseURL}/v1/messages`, {
    method: 'POST', body: JSON.stringify({ ...body, stream: true }),
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' } });
  assert.equal(wire.headers.get('content-type'), 'text/event-stream');
  const events = (await wire.text()).split('\n\n').filter(Boolean).map((e) => {
    const [, name, data] = e.match(/^event: (\S+)\ndata: (.*)$/s);
    const parsed = JSON.parse(data);
    assert.equal(parsed.type, name);
    return parsed;
  });
  const types = events.map((e) => e.type);
  const deltas = types.filter((t) => t === 'content_block_delta').length;
  assert.ok(deltas >= 1);
  assert.deepEqual(types, ['message_start', 'content_block_start', 'ping', ...Array(deltas).fill('content_block_delta'),
    'content_block_stop', 'message_delta', 'message_stop']);
  const text = events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text).join('');
  assert.equal(text, whole.content[0].text);
  const end = events.find((e) => e.type === 'message_delta');
  assert.equal(end.delta.stop_reason, 'max_tokens');
  assert.equal(end.usage.output_tokens, 12);
  // The SDK's own accumulator builds the same message.
  const final = await c.messages.stream(body).finalMessage();
  assert.deepEqual(final.content, whole.content);
  assert.equal(final.stop_reason, 'max_tokens');
  assert.equal(final.usage.output_tokens, 12);
});

test('stop_sequences: stop_reason stop_sequence names the one that matched', { skip: missingShared }, async () => {
  const c = client(mock);
  const m = await c.messages.create({ model: 'tiny', max_tokens: 40, temperature: 0, messages,
    stop_sequences: ['zebra', 'keeper'] });
  assert.equal(m.content[0].text, 'The lighthouse ');
  assert.equal(m.stop_reason, 'stop_sequence');
  assert.equal(m.stop_sequence, 'keeper');
  const streamed = await c.messages.stream({ model: 'tiny', max_tokens: 40, temperature: 0, messages,
    stop_sequences: ['keeper'] }).finalMessage();
  assert.equal(streamed.content[0].text, 'The lighthouse ');
  assert.equal(streamed.stop_sequence, 'keeper');
});

test('count_tokens counts the prompt a message would read', { skip: missingShared }, async () => {
  const c = client(mock);
  const counted = await c.messages.countTokens({ model: 'tiny', messages, system: 'Be brief.' });
  const m = await c.messages.create({ model: 'tiny', max_tokens: 1, messages, system: 'Be brief.' });
  assert.equal(counted.input_tokens, m.usage.input_tokens + m.usage.cache_read_input_tokens);
  assert.ok(counted.input_tokens > 5);
});

test('errors arrive as the SDK\'s error classes, in Anthropic\'s shape', { skip: missingShared }, async () => {
  const check = (Class, status, type) => (e) => {
    assert.ok(e instanceof Class, `got ${e?.constructor?.name}: ${e?.message}`);
    assert.equal(e.status, status);
    assert.equal(e.error.type, 'error');
    assert.equal(e.error.error.type, type);
    assert.equal(typeof e.error.error.message, 'string');
    return true;
  };
  const c = client(mock);
  await assert.rejects(c.messages.create({ model: 'tiny', messages }),
    check(Anthropic.BadRequestError, 400, 'invalid_request_error'));  // no max_tokens
  await assert.rejects(c.messages.create({ model: 'tiny', max_tokens: 4, messages: [] }),
    check(Anthropic.BadRequestError, 400, 'invalid_request_error'));
  await assert.rejects(c.messages.create({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: [
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }] }),
  check(Anthropic.BadRequestError, 400, 'invalid_request_error'));
  await assert.rejects(client(mock, 'wrong').messages.create({ model: 'tiny', max_tokens: 4, messages }),
    check(Anthropic.AuthenticationError, 401, 'authentication_error'));
});

const weather = { name: 'get_weather', description: 'The weather in a city', input_schema: {
  type: 'object', properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } },
  required: ['city', 'unit'] } };
const add = { name: 'add', input_schema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } },
  required: ['a', 'b'] } };
const ajv = new Ajv();

test('tools: tool_choice tool and any call from the first token; input matches the schema; tool_result continues',
  { skip: missingShared }, async () => {
    const c = client(qwen3);
    const ask = [{ role: 'user', content: 'Weather in Paris?' }];
    const named = await c.messages.create({ model: 'q', max_tokens: 200, messages: ask, tools: [weather, add],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true } });
    assert.equal(named.stop_reason, 'tool_use');
    const uses = named.content.filter((b) => b.type === 'tool_use');
    assert.equal(uses.length, 1);
    assert.match(uses[0].id, /^toolu_/);
    assert.equal(uses[0].name, 'get_weather');
    assert.ok(ajv.validate(weather.input_schema, uses[0].input), JSON.stringify(uses[0].input));

    for (const seed of [1, 2, 3]) {
      const stream = c.messages.stream({ model: 'q', max_tokens: 200, messages: ask, tools: [weather, add],
        tool_choice: { type: 'any' }, temperature: 1, top_k: 40 });
      const m = await stream.finalMessage();
      assert.equal(m.stop_reason, 'tool_use', `seed ${seed}`);
      for (const use of m.content.filter((b) => b.type === 'tool_use')) {
        const tool = [weather, add].find((t) => t.name === use.name);
        assert.ok(tool, use.name);
        assert.ok(ajv.validate(tool.input_schema, use.input), JSON.stringify(use.input));
      }
    }

    const history = [...ask,
      { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, uses[0]] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: uses[0].id, content: '18 C, sunny' },
        { type: 'text', text: 'And tomorrow?' }] }];
    const followUp = await c.messages.create({ model: 'q', max_tokens: 4, tools: [weather, add], messages: history });
    assert.equal(followUp.type, 'message');
    assert.ok(['end_turn', 'max_tokens', 'tool_use'].includes(followUp.stop_reason));
    // The same history reaches the model whole: an engine that answers with its prompt shows the
    // call, its result and the question after it (the call read back as a call).
    const echoed = await client(echo).messages.create({ model: 'q', max_tokens: 2048, temperature: 0,
      tools: [weather, add], messages: history });
    const prompt = echoed.content.map((b) => b.text ?? b.thinking ?? '').join('');
    assert.ok(prompt.includes(qwen3ToolResult('18 C, sunny')), prompt);
    assert.ok(prompt.includes('And tomorrow?'), prompt);
    const echoedUses = echoed.content.filter((b) => b.type === 'tool_use');
    assert.deepEqual(echoedUses.map((b) => [b.name, b.input]), [['get_weather', uses[0].input]], JSON.stringify(echoed));
    const none = await c.messages.create({ model: 'q', max_tokens: 4, messages: ask, tools: [weather],
      tool_choice: { type: 'none' } });
    assert.ok(none.content.every((b) => b.type !== 'tool_use'));
    await assert.rejects(c.messages.create({ model: 'q', max_tokens: 4, messages: ask, tools: [weather],
      tool_choice: { type: 'tool', name: 'nope' } }), Anthropic.BadRequestError);
  });

test('output_config.format holds the text to a JSON schema', { skip: missingShared }, async () => {
  const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 10 }, age: { type: 'integer',
    minimum: 0, maximum: 150 } }, required: ['name', 'age'], additionalProperties: false };
  const m = await client(qwen3).messages.create({ model: 'q', max_tokens: 100, messages,
    thinking: { type: 'disabled' }, output_config: { format: { type: 'json_schema', schema } } });
  assert.equal(m.stop_reason, 'end_turn');
  assert.ok(ajv.validate(schema, JSON.parse(m.content[0].text)), m.content[0].text);
});
