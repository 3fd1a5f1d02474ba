// The chat page's reader of server-sent events (web/sse.mjs): a stream's text arrives cut
// anywhere, even inside an event, and each event's data comes out whole, once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseReader } from '../../web/sse.mjs';

test('events cut anywhere come out whole', () => {
  const stream = 'data: {"a":1}\n\nevent: ping\ndata: {"b":\ndata: 2}\n\n: a comment\n\ndata: [DONE]\n\n';
  const whole = new SseReader().push(stream);
  assert.deepEqual(whole, ['{"a":1}', '{"b":\n2}', '[DONE]']);
  for (let cut = 1; cut < stream.length; cut += 1) {
    const reader = new SseReader();
    const events = [...reader.push(stream.slice(0, cut)), ...reader.push(stream.slice(cut))];
    assert.deepEqual(events, whole, `cut at ${cut}`);
  }
});

test('an event is given only once its blank line came', () => {
  const reader = new SseReader();
  assert.deepEqual(reader.push('data: x\n'), []);
  assert.deepEqual(reader.push('\n'), ['x']);
  assert.deepEqual(reader.push(''), []);
});
