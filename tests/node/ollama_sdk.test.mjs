// The official ollama SDK against nanoserve's Ollama API: what Open WebUI, Continue and the
// editors' Ollama clients see. Text comes from the mock engine (a known passage); JSON
// schemas and tools from a model with Qwen3's vocabulary and chat template (random weights).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Ollama } from 'ollama';
import Ajv from 'ajv';
import { startServer, tinyModel, qwen3VocabModel, missingShared, assertPassageStart, echoServerArgs, qwen3ToolResult }
  from './serve_helpers.mjs';

let mock;
let qwen3;
let echo;
const client = (server) => new Ollama({ host: server.baseURL });
const messages = [{ role: 'user', content: 'Tell me a story.' }];
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
  // No request failed inside the server (the 501s of the model store are answers, not failures).
  for (const s of [mock, qwen3]) assert.doesNotMatch(s.log(), /^POST \S+ 500 /m);
});

test('chat, whole and streamed: the same text, the counts and clocks clients read', { skip: missingShared }, async () => {
  const o = client(mock);
  const options = { num_predict: 12, temperature: 0 };
  const r = await o.chat({ model: 'tiny', messages, stream: false, options });
  assert.equal(r.message.role, 'assistant');
  assertPassageStart(r.message.content, 12);
  assert.equal(r.done, true);
  assert.equal(r.done_reason, 'length');
  assert.equal(r.eval_count, 12);
  assert.ok(r.prompt_eval_count > 0);
  for (const key of ['total_duration', 'prompt_eval_duration', 'eval_duration']) assert.ok(r[key] > 0, key);
  assert.ok(r.total_duration >= r.prompt_eval_duration + r.eval_duration);
  assert.ok(r.created_at instanceof Date || typeof r.created_at === 'string');

  const parts = [];
  for await (const part of await o.chat({ model: 'tiny', messages, stream: true, options })) parts.push(part);
  assert.ok(parts.length >= 2);
  assert.ok(parts.slice(0, -1).every((p) => p.done === false));
  assert.equal(parts.at(-1).done, true);
  assert.equal(parts.at(-1).eval_count, 12);
  assert.equal(parts.map((p) => p.message.content).join(''), r.message.content);
});

test('generate: templated and raw; stop ends the text', { skip: missingShared }, async () => {
  const o = client(mock);
  const r = await o.generate({ model: 'tiny', prompt: 'Tell me a story.', system: 'Be brief.', stream: false,
    options: { num_predict: 40, temperature: 0, stop: ['zebra', 'keeper'] } });
  assert.equal(r.response, 'The lighthouse ');
  assert.equal(r.done_reason, 'stop');
  const raw = await o.generate({ model: 'tiny', prompt: 'Once', raw: true, stream: false,
    options: { num_predict: 6, temperature: 0 } });
  assertPassageStart(raw.response, 6);
  assert.ok(raw.prompt_eval_count < r.prompt_eval_count, 'a raw prompt has no template around it');
  let streamed = '';
  for await (const part of await o.generate({ model: 'tiny', prompt: 'Once', raw: true, stream: true,
    options: { num_predict: 6, temperature: 0 } }))
    streamed += part.response;
  assert.equal(streamed, raw.response);
  // An empty prompt only loads the model.
  const load = await o.generate({ model: 'tiny', prompt: '', stream: false });
  assert.equal(load.done_reason, 'load');
});

test('tags, ps, show and version describe the served model', { skip: missingShared }, async () => {
  const o = client(qwen3);
  const { models } = await o.list();
  assert.equal(models.length, 1);
  assert.equal(models[0].details.format, 'gguf');
  assert.equal(models[0].details.family, 'qwen3');
  assert.equal(models[0].details.quantization_level, 'Q8_0');
  assert.ok(models[0].size > 1000000);
  const running = await o.ps();
  assert.equal(running.models[0].name, models[0].name);
  assert.equal(running.models[0].context_length, 4096);
  const shown = await o.show({ model: models[0].name });
  assert.match(shown.template, /im_start/);
  assert.deepEqual(shown.capabilities, ['completion', 'tools', 'thinking']);
  assert.equal(shown.model_info['qwen3.context_length'], 4096);
  assert.ok(shown.model_info['general.parameter_count'] > 1000000);
  assert.match((await o.version()).version, /^\d+\.\d+\.\d+$/);
});

test('format: "json" and a schema hold the output; tools and tool history are accepted', { skip: missingShared }, async () => {
  const o = client(qwen3);
  const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 10 }, age: { type: 'integer',
    minimum: 0, maximum: 150 } }, required: ['name', 'age'], additionalProperties: false };
  const r = await o.chat({ model: 'q', messages, format: schema, think: false, stream: false, options: { num_predict: 100 } });
  assert.equal(r.done_reason, 'stop');
  assert.ok(ajv.validate(schema, JSON.parse(r.message.content)), r.message.content);
  // Greedy, so that the output (random weights) is the same every run, and one that ends.
  const json = await o.generate({ model: 'q', prompt: 'JSON please', format: 'json', think: false, stream: false,
    options: { num_predict: 200, temperature: 0 } });
  assert.equal(json.done_reason, 'stop', json.response);
  assert.equal(typeof JSON.parse(json.response), 'object');

  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const history = [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: '', thinking: 'Look it up.', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
    { role: 'tool', content: '18 C', tool_name: 'get_weather' },
    { role: 'user', content: 'And tomorrow?' }];
  const followUp = await o.chat({ model: 'q', tools, stream: false, options: { num_predict: 4 }, messages: history });
  assert.equal(followUp.done, true);
  // The same history reaches the model whole: an engine that answers with its prompt shows the
  // call, its result and the question after it (the call read back as a call).
  const echoed = await client(echo).chat({ model: 'q', tools, stream: false, think: false,
    options: { num_predict: 2048, temperature: 0 }, messages: history });
  const prompt = `${echoed.message.thinking ?? ''}${echoed.message.content}`;
  assert.ok(prompt.includes(qwen3ToolResult('18 C')), prompt);
  assert.ok(prompt.includes('And tomorrow?'), prompt);
  assert.deepEqual(echoed.message.tool_calls.map((c) => [c.function.name, c.function.arguments]),
    [['get_weather', { city: 'Paris' }]], JSON.stringify(echoed.message));
});

test('errors are {"error": ...} with a 4xx; the model store is not served (501)', { skip: missingShared }, async () => {
  const o = client(mock);
  const refused = async (promise, status, pattern) => assert.rejects(promise, (e) => {
    assert.equal(e.name, 'ResponseError', `${e.name}: ${e.message}`);
    assert.equal(e.status_code, status);
    assert.match(e.error, pattern);
    return true;
  });
  await refused(o.chat({ model: 'tiny', messages: [{ role: 'robot', content: 'x' }], stream: false }), 400, /role/);
  await refused(o.chat({ model: 'tiny', messages, format: 'yaml', stream: false }), 400, /format/);
  await refused(o.chat({ model: 'tiny', messages, stream: false, options: { num_ctx: 10000000 } }), 400, /num_ctx/);
  await refused(o.generate({ model: 'tiny', prompt: 'x', suffix: 'y', stream: false }), 400, /suffix/);
  await refused(o.generate({ model: 'tiny', prompt: 'x', images: ['aGk='], stream: false }), 400, /images/);
  const pull = await fetch(`${mock.baseURL}/api/pull`, { method: 'POST', body: JSON.stringify({ model: 'llama3' }) });
  assert.equal(pull.status, 501);
  assert.match((await pull.json()).error, /not supported/);
  const unknown = await fetch(`${mock.baseURL}/api/nothing`);
  assert.equal(unknown.status, 404);
  assert.match((await unknown.json()).error, /unknown route/);
});
