// Memory that comes back: rounds of requests with 1M-character prompts (8 at a time) against the
// mock engine, as the hostile-input probe sent them. The server's resident memory after each
// round stays within 64 MB of where it started, and within 256 MB of it at its peak: a request's
// large buffers go back to the system when it ends, and no cache grows with the server's threads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, tinyModel, missingShared } from './serve_helpers.mjs';

let server;

before(async () => {
  if (missingShared) return;
  server = await startServer(['--engine', 'mock', '--model', tinyModel]);
});

after(async () => {
  if (missingShared) return;
  assert.equal(await server.stop(), 0);
});

const residentMB = () =>
  Number(readFileSync(`/proc/${server.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;

test('resident memory returns after rounds of 1M-character prompts', { skip: missingShared }, async () => {
  const big = 'word '.repeat(200_000);
  const body = JSON.stringify({ messages: [{ role: 'user', content: big }], max_tokens: 1 });
  const baseline = residentMB();
  for (let round = 0; round < 3; round++) {
    let left = 100;
    let peak = 0;
    const watch = setInterval(() => { peak = Math.max(peak, residentMB()); }, 10);
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (left-- > 0) {
        const r = await fetch(`${server.baseURL}/v1/chat/completions`,
          { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        assert.equal(r.status, 400);  // longer than the model's context: refused after tokenizing
        await r.text();
      }
    }));
    clearInterval(watch);
    await sleep(200);
    const now = residentMB();
    assert.ok(now <= baseline + 64, `round ${round}: ${now.toFixed(0)} MB after, from ${baseline.toFixed(0)} MB`);
    assert.ok(peak <= baseline + 256, `round ${round}: peak ${peak.toFixed(0)} MB, from ${baseline.toFixed(0)} MB`);
  }
});
