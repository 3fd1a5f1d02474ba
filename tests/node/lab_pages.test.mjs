// The lab's pages (web/lab/, served under /lab/) in a real browser: Debian's chromium, headless,
// driven by playwright-core, against the batch engine on a real model (pycoder) with a KV pool
// too small for the four long answers the test asks for at once, so that the engine must
// preempt. What a reader relies on: the engine page draws live data (sequences running, their
// blocks in the pool, the steps' sizes) while the requests run, and shows the preemption; the
// timeline page draws each of those requests (queue, prefill, decode steps, preemption,
// recompute, the server's writes), with the step's batch size in each bar's description; and
// with --api-key, the pages ask for the key once.
//
// Skipped, saying why, without chromium or ../shared (failed instead under CI=true or
// NANOSERVE_REQUIRE_SHARED=1). NANOSERVE_SCREENSHOT=1 saves docs/lab-engine.png and
// docs/lab-timeline.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { startServer, sharedDir, missingShared, required, metric } from './serve_helpers.mjs';

const chromiumPath = (process.env.NANOSERVE_CHROMIUM ? [process.env.NANOSERVE_CHROMIUM] :
  ['/usr/bin/chromium', '/usr/bin/chromium-browser']).find(existsSync);
const noChromium = !chromiumPath && 'chromium is not installed (Debian: apt-get install chromium; or set NANOSERVE_CHROMIUM)';
const pycoder = `${sharedDir}/models/pycoder/pycoder-f16.gguf`;
const skip = missingShared || (!required && noChromium) || (!required && !existsSync(pycoder) && `missing test data ${pycoder}`);
const docs = fileURLToPath(new URL('../../docs/', import.meta.url));
const screenshots = process.env.NANOSERVE_SCREENSHOT === '1';
const apiKey = 'lab-key';

let browser;
let server;
const pageErrors = [];

before(async () => {
  if (skip) return;
  if (noChromium) throw new Error(noChromium);
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
  // 42 blocks of 16 positions; four answers of 10 + 400 tokens need 104: the newest give way.
  server = await startServer(['--model', pycoder, '--kv-memory', '2M', '--ctx', '640', '--parallel', '4',
    '--threads', '1', '--api-key', apiKey]);
});

after(async () => {
  if (skip) return;
  await browser?.close();
  assert.equal(await server?.stop(), 0);
  assert.deepEqual(pageErrors, [], 'a page threw');
});

async function openPage(path) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(`${path}: ${error.message}`));
  // The pages' Content-Security-Policy allows no inline style or script: a violation is a bug.
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/.test(message.text())) pageErrors.push(`${path}: ${message.text()}`);
  });
  // The key, as a reader would type it when the page asks (the page keeps it for the next).
  page.on('dialog', (d) => d.dismiss());
  await page.goto(`${server.baseURL}${path}`);
  return page;
}

async function enterKeyIfAsked(page) {
  const dialog = page.locator('#key-dialog');
  await dialog.waitFor({ state: 'visible', timeout: 10000 });
  await page.fill('#key', apiKey);
  await page.press('#key', 'Enter');
}

// Four long completions at once; resolves to their ids.
function drive() {
  return Promise.all([0, 1, 2, 3].map(async (i) => {
    const response = await fetch(`${server.baseURL}/v1/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ prompt: `import os\nimport sys${i}\n\ndef main():\n`, max_tokens: 400, ignore_eos: true }),
    });
    assert.equal(response.status, 200);
    return (await response.json()).id;
  }));
}

const count = (page, selector) => page.locator(selector).count();

// Waits on the page's state poll it every 100 ms for up to 10 s, not in animation frames for 5 s:
// once, in a fresh clone's `make test` (every node test file at once on two cores), the page's
// preemption counter was not seen above 0 in time, where these requests preempt about 5 times.
const polled = { polling: 100, timeout: 10000 };

// What the engine page shows now, read in one round trip (the page redraws every snapshot, and on
// two cores each call to the browser can wait a while): sequences running, blocks drawn as held,
// preemptions logged, and the most sequences any step in the steps chart carried (its bars' titles
// say "for N sequences"; the chart keeps the last 200 steps, so it shows batches a sample missed).
const engineView = (page) => page.evaluate(() => ({
  running: Number(document.getElementById('running').textContent),
  held: document.querySelectorAll('#pool rect.block.held').length,
  preemptions: document.querySelectorAll('#preemption-log li:not(.empty)').length,
  stepSequences: Math.max(0, ...Array.from(document.querySelectorAll('#steps-chart rect.step title'),
    (t) => Number(/for (\d+) sequences/.exec(t.textContent)?.[1] ?? 0))),
}));

test('the engine page draws the batch live and shows a preemption', { skip }, async () => {
  const page = await openPage('/lab/engine.html');
  await enterKeyIfAsked(page);
  await page.waitForFunction(() => document.getElementById('status').textContent === 'live', null, polled);
  const requests = drive();
  // While the requests run: several sequences at once, their blocks drawn in their colours.
  let mostRunning = 0, mostHeld = 0, sawPreemption = false, shot = false;
  for (let settled = false; !settled;) {
    settled = await Promise.race([requests.then(() => true), sleep(50).then(() => false)]);
    const view = await engineView(page);
    mostRunning = Math.max(mostRunning, view.running, view.stepSequences);
    mostHeld = Math.max(mostHeld, view.held);
    if (!sawPreemption && view.preemptions > 0) {
      sawPreemption = true;
      if (screenshots && !shot) {
        shot = true;
        await page.screenshot({ path: `${docs}lab-engine.png`, fullPage: true });
      }
    }
  }
  const ids = await requests;
  assert.ok(mostRunning >= 2, `at most ${mostRunning} sequences ran at once`);
  assert.ok(mostHeld > 0, 'no block was drawn as held');
  // The preemption reaches the page: the counter, and the log naming one of the requests. (A
  // failure names the server's own count and the page's stream status: which side missed it.)
  await page.waitForFunction(() => Number(document.getElementById('preemptions').textContent) > 0, null, polled)
    .catch(async (error) => {
      const serverCount = await metric(server.baseURL, 'nanoserve_preemptions_total', apiKey);
      throw new Error(`the page shows no preemption; the server counts ${serverCount}, the page's stream is ` +
        `"${await page.textContent('#status')}": ${error.message}`);
    });
  const log = await page.textContent('#preemption-log');
  assert.ok(ids.some((id) => log.includes(id)), `the log names none of ${ids}: ${log}`);
  // Steps were drawn, with their sizes; and once idle, no sequence is left and every block is free or cached.
  assert.ok(await count(page, '#steps-chart rect.step') > 10);
  await page.waitForFunction(() => document.getElementById('running').textContent === '0', null, polled);
  assert.equal(await count(page, '#pool rect.block.held'), 0);
  assert.equal(await count(page, '#sequences tr.running'), 0);
  globalThis.labIds = ids;
  await page.close();
});

test('the timeline page draws each request: queue, prefill, decode steps with their batch, preemption, writes', { skip }, async () => {
  const ids = globalThis.labIds ?? await drive();
  const page = await openPage('/lab/timeline.html');
  await enterKeyIfAsked(page);
  for (const id of ids) await page.locator(`section.request[data-id="${id}"]`).waitFor({ timeout: 10000 });
  let preempted = 0;
  for (const id of ids) {
    const row = page.locator(`section.request[data-id="${id}"]`);
    assert.equal(await row.locator('rect.ev.queued').count() >= 1, true, `${id}: no queue bar`);
    assert.ok(await row.locator('rect.ev.prefill').count() >= 1, `${id}: no prefill`);
    assert.ok(await row.locator('rect.ev.decode').count() > 100, `${id}: too few decode steps`);
    assert.ok(await row.locator('line.ev.write').count() > 100, `${id}: too few writes`);
    const description = await row.locator('rect.ev.decode title').first().textContent();
    assert.match(description, /step \d+: decode, 1 of its rows; the step had \d+ sequences, \d+ rows/);
    if (await row.locator('path.ev.preempted').count() > 0) {
      preempted += 1;
      assert.ok(await row.locator('rect.ev.recompute').count() >= 1, `${id}: preempted, never recomputed`);
    }
    assert.match(await row.locator('.facts').textContent(), /first text written at .* steps \(mean batch/);
  }
  assert.ok(preempted >= 1, 'no request drawn as preempted');
  if (screenshots) await page.screenshot({ path: `${docs}lab-timeline.png`, fullPage: true });
  await page.close();
});
