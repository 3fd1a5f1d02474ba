// The official openai SDK's Responses API (responses.create, responses.stream) against
// nanoserve: what Codex and other Responses clients see. Text comes from the mock engine (a
// known passage); function calls and JSON schemas from a model with Qwen3's vocabulary and
// chat template (random weights, held to the schema).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Ajv from 'ajv';
import { startServer, tinyModel, qwen3VocabModel, missingShared, assertPassageStart, echoServerArgs, qwen3ToolResult }
  from './serve_helpers.mjs';

let mock;
let qwen3;
let echo;
const client = (server) => new OpenAI({ baseURL: `${server.baseURL}/v1`, apiKey: 'unused', maxRetries: 0 });
const ajv = new Ajv();

before(async () => {
  if (missingShared) return;
  mock = await startServer(['--engine', 'mock', '--model', tinyModel, '--mock-token-delay-us', '1000']);
  qwen3 = await startServer(['--model', qwen3VocabModel, '-t', '2']);
  echo = await startServer(echoServerArgs(qwen3VocabModel));
});

after(async () => {
  if (missingShared) return;
  assert.equal(await mock.stop(), 0);
  assert.equal(await qwen3.stop(), 0);
  assert.equal(await echo.stop(), 0);
  for (const s of [mock, qwen3]) assert.doesNotMatch(s.log(), /^POST \S+ 5\d\d /m);
});

test('a response, whole: output_text, status, usage', { skip: missingShared }, async () => {
  const r = await client(mock).responses.create({ model: 'tiny', input: 'Tell me a story.', instructions: 'Be terse.',
    max_output_tokens: 12, temperature: 0, store: false });
  assert.match(r.id, /^resp_/);
  assert.equal(r.object, 'response');
  assert.equal(r.status, 'incomplete');
  assert.deepEqual(r.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(r.instructions, 'Be terse.');
  assert.equal(r.output.length, 1);
  assert.equal(r.output[0].type, 'message');
  assertPassageStart(r.output_text, 12);
  assert.equal(r.usage.output_tokens, 12);
  assert.equal(r.usage.total_tokens, r.usage.input_tokens + 12);
  assert.equal(typeof r.nanoserve.ttft_ms, 'number');
});

test('a response, streamed: typed events in order with sequence numbers, the same text', { skip: missingShared }, async () => {
  const c = client(mock);
  const body = { model: 'tiny', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Tell me a story.' }] }],
    max_output_tokens: 12, temperature: 0 };
  const whole = await c.responses.create(body);
  const stream = await c.responses.create({ ...body, stream: true });
  const events = [];
  for await (const event of stream) events.push(event);
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
  const types = events.map((e) => e.type);
  const deltas = types.filter((t) => t === 'response.output_text.delta').length;
  assert.ok(deltas >= 1);
  assert.deepEqual(types, ['response.created', 'response.in_progress', 'response.output_item.added',
    'response.content_part.added', ...Array(deltas).fill('response.output_text.delta'), 'response.output_text.done',
    'response.content_part.done', 'response.output_item.done', 'response.incomplete']);
  const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  assert.equal(text, whole.output_text);
  const end = events.at(-1).response;
  assert.equal(end.usage.output_tokens, 12);
  assert.equal(end.output[0].content[0].text, text);
  // The SDK's helper accumulates the same text from the events.
  const final = await c.responses.stream(body).finalResponse();
  assert.equal(final.output[0].content[0].text, whole.output_text);
});

const tools = [
  { type: 'function', name: 'get_weather', description: 'The weather in a city', strict: true, parameters: {
    type: 'object', properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } },
    required: ['city', 'unit'], additionalProperties: false } },
  { type: 'function', name: 'add', parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } },
    required: ['a', 'b'] } },
  { type: 'web_search' },  // the service's own: not offered to the model
];

test('function calls: forced, streamed, and answered with function_call_output', { skip: missingShared }, async () => {
  const c = client(qwen3);
  const input = [{ role: 'user', content: 'Weather in Paris?' }];
  const named = await c.responses.create({ model: 'q', input, tools, max_output_tokens: 200,
    tool_choice: { type: 'function', name: 'get_weather' }, parallel_tool_calls: false, reasoning: { effort: 'none' } });
  assert.equal(named.status, 'completed');
  const calls = named.output.filter((i) => i.type === 'function_call');
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, 'get_weather');
  assert.match(calls[0].call_id, /^call_/);
  assert.ok(ajv.validate(tools[0].parameters, JSON.parse(calls[0].arguments)), calls[0].arguments);

  const stream = await c.responses.create({ model: 'q', input, tools, tool_choice: 'required', max_output_tokens: 200,
    temperature: 1, stream: true });
  let args = '';
  let done;
  for await (const e of stream) {
    if (e.type === 'response.function_call_arguments.delta') args += e.delta;
    if (e.type === 'response.completed') done = e.response;
  }
  const streamedCalls = done.output.filter((i) => i.type === 'function_call');
  assert.ok(streamedCalls.length >= 1);
  assert.equal(args, streamedCalls.map((x) => x.arguments).join(''));
  for (const call of streamedCalls) {
    const tool = tools.find((t) => t.name === call.name);
    assert.ok(ajv.validate(tool.parameters, JSON.parse(call.arguments)), call.arguments);
  }

  const history = [...input, calls[0], { type: 'function_call_output', call_id: calls[0].call_id, output: '18 C, sunny' },
    { role: 'user', content: 'And tomorrow?' }];
  const followUp = await c.responses.create({ model: 'q', tools, max_output_tokens: 4, input: history });
  assert.equal(followUp.object, 'response');
  // The same history reaches the model whole: an engine that answers with its prompt shows the
  // call, its output and the question after it (the call read back as a call).
  const echoed = await client(echo).responses.create({ model: 'q', tools, max_output_tokens: 2048, temperature: 0,
    input: history });
  const prompt = echoed.output.map((i) => (i.content ?? []).map((p) => p.text ?? '').join('')).join('');
  assert.ok(prompt.includes(qwen3ToolResult('18 C, sunny')), prompt);
  assert.ok(prompt.includes('And tomorrow?'), prompt);
  const echoedCalls = echoed.output.filter((i) => i.type === 'function_call');
  assert.deepEqual(echoedCalls.map((x) => [x.name, JSON.parse(x.arguments)]),
    [['get_weather', JSON.parse(calls[0].arguments)]], JSON.stringify(echoed.output));
});

test('text.format json_schema holds the output to the schema', { skip: missingShared }, async () => {
  const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 10 }, age: { type: 'integer',
    minimum: 0, maximum: 150 } }, required: ['name', 'age'], additionalProperties: false };
  const r = await client(qwen3).responses.create({ model: 'q', input: 'A person, please.', max_output_tokens: 100,
    reasoning: { effort: 'none' }, text: { format: { type: 'json_schema', name: 'person', schema, strict: true } } });
  assert.equal(r.status, 'completed');
  assert.ok(ajv.validate(schema, JSON.parse(r.output_text)), r.output_text);
});

test('what nanoserve cannot do is a BadRequestError naming the field', { skip: missingShared }, async () => {
  const c = client(mock);
  const refused = async (body, param) => assert.rejects(c.responses.create({ model: 'tiny', ...body }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError, `got ${e?.constructor?.name}: ${e?.message}`);
    assert.equal(e.status, 400);
    assert.equal(e.param, param);
    return true;
  });
  await refused({ input: 'hi', previous_response_id: 'resp_123' }, 'previous_response_id');
  await refused({}, 'input');
  await refused({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'http://x/y.png' }] }] },
    'input[0].content[0].type');
  await refused({ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type');
  await refused({ input: 'hi', tool_choice: 'required' }, 'tool_choice');
});
