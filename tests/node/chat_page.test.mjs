// The chat page (web/, served at /) in a real browser: Debian's chromium, headless, driven by
// playwright-core. Against the mock engine (an answer of our choosing, slowed down so that it
// can be watched and stopped) with --api-key, then a real model (pycoder). What a user relies
// on: the key is asked for once and kept; the answer streams in and renders as Markdown; Stop
// ends it and the server cancels the generation; the engine's figures appear under it; the
// second message carries the history; a refused request says why; markup in the model's
// output is text and runs nothing; a model's reasoning is folded above its answer.
//
// Skipped, saying why, without chromium or ../shared (failed instead under CI=true or
// NANOSERVE_REQUIRE_SHARED=1). NANOSERVE_SCREENSHOT=1 saves the real model's answer as
// docs/chat-page.png. NANOSERVE_CHROMIUM names another chromium binary.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { startServer, tinyModel, qwen3VocabModel, sharedDir, missingShared, required } from './serve_helpers.mjs';

const chromiumPath = (process.env.NANOSERVE_CHROMIUM ? [process.env.NANOSERVE_CHROMIUM] :
  ['/usr/bin/chromium', '/usr/bin/chromium-browser']).find(existsSync);
const noChromium = !chromiumPath && 'chromium is not installed (Debian: apt-get install chromium; or set NANOSERVE_CHROMIUM)';
const skip = missingShared || (!required && noChromium);
const pycoder = `${sharedDir}/models/pycoder/pycoder-q8_0.gguf`;
const skipRealModel = skip || (!required && !existsSync(pycoder) && `missing test data ${pycoder}`);

const apiKey = 'page-test-key';
// What the mock engine answers, over and over: Markdown, and markup that must stay text.
const passage = 'Here is **bold** text and `inline code`.\n\n<script>window.pwned = 1</script>\n' +
  '<img src=x onerror="window.pwned = 2">\n\n```js\nconsole.log("hi");\n```\n\n';

let browser;
let mock;  // the mock engine's server
let page;  // one page for the mock tests, which follow each other as a user would
const requested = [];  // the paths that page fetched
const pageErrors = [];

before(async () => {
  if (skip) return;
  if (noChromium) throw new Error(noChromium);
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
  mock = await startServer(['--engine', 'mock', '--model', tinyModel, '--api-key', apiKey,
    '--mock-token-delay-us', '10000', '--mock-passage', passage]);
  page = await browser.newPage();
  page.on('request', (request) => requested.push(new URL(request.url()).pathname));
  page.on('pageerror', (error) => pageErrors.push(error.message));
});

after(async () => {
  if (skip) return;
  await browser?.close();
  assert.equal(await mock?.stop(), 0);
  assert.deepEqual(pageErrors, [], 'the page threw');
});

const answers = (p) => p.locator('.message.assistant');

// Types `text` into the composer (Shift+Enter between its lines), sends it (Enter), and samples
// the new answer's text while it is written; resolves to the samples once its figures (or a
// note) appear under it.
async function sendAndWatch(p, text) {
  const count = await answers(p).count();
  const [first, ...more] = text.split('\n');
  await p.fill('#prompt', first);
  for (const line of more) {
    await p.press('#prompt', 'Shift+Enter');
    await p.keyboard.type(line);
  }
  await p.press('#prompt', 'Enter');
  const answer = answers(p).nth(count);
  const samples = [];
  for (const deadline = Date.now() + 20000; ; await sleep(10)) {
    const [body, footer] = await Promise.all([
      answer.locator('.answer').textContent().catch(() => ''),
      answer.locator('.stats').textContent().catch(() => ''),
    ]);
    if (footer) return { answer, samples };
    samples.push(body);
    assert.ok(Date.now() < deadline, 'the answer did not finish');
  }
}

// Distinct non-empty texts among the samples: the answer seen at that many moments.
const moments = (samples) => new Set(samples.filter((s) => s.length > 0)).size;

async function openSettings(p) {
  if ((await p.locator('details.settings').getAttribute('open')) === null) await p.click('details.settings summary');
}

async function cancellations(server) {
  const text = await (await fetch(`${server.baseURL}/metrics`, { headers: { Authorization: `Bearer ${apiKey}` } })).text();
  return Number(text.match(/^nanoserve_request_cancellations_total (\S+)$/m)[1]);
}

test('the page asks for the API key once, keeps it and retries', { skip }, async () => {
  await page.goto(`${mock.baseURL}/`);
  const dialog = page.locator('#key-dialog');
  await dialog.waitFor({ state: 'visible' });
  await page.fill('#key', 'wrong');
  await page.press('#key', 'Enter');
  await assert.doesNotReject(page.locator('#key-message', { hasText: 'refused' }).waitFor());
  await page.fill('#key', apiKey);
  await page.press('#key', 'Enter');
  await page.locator('#model', { hasText: 'tiny' }).waitFor();  // the retried GET /v1/models
  assert.equal(await dialog.isVisible(), false);
  assert.equal(await page.evaluate(() => localStorage.getItem('nanoserve.apiKey')), apiKey);
  // Kept: a new visit asks no more.
  await page.reload();
  await page.locator('#model', { hasText: 'tiny' }).waitFor();
  assert.equal(await dialog.isVisible(), false);
});

test('an answer streams in as Markdown, with the engine figures under it', { skip }, async () => {
  await openSettings(page);
  await page.fill('#temperature', '0');  // the mock's passage exactly
  await page.fill('#max-tokens', '100');  // nearly all of it
  const { answer, samples } = await sendAndWatch(page, 'Show me some formatting.');
  assert.ok(moments(samples) >= 2, `seen at ${moments(samples)} moment(s) while it was written`);
  assert.equal(await answer.locator('.answer strong').textContent(), 'bold');
  assert.equal(await answer.locator('.answer p code').textContent(), 'inline code');
  assert.equal(await answer.locator('.answer pre code').textContent(), 'console.log("hi");');
  const stats = await answer.locator('.stats').textContent();
  assert.match(stats, /TTFT \d+ ms · prefill [\d.]+ tok\/s · decode [\d.]+ tok\/s · prompt \d+ tokens \(\d+ cached\) · answer 100 tokens/);
});

test('markup in the output is shown as text and runs nothing', { skip }, async () => {
  // The last answer holds the whole passage, <script> and <img onerror> included.
  const answer = answers(page).last().locator('.answer');
  const text = await answer.textContent();
  assert.ok(text.includes('<script>window.pwned = 1</script>'), text);
  assert.ok(text.includes('<img src=x onerror="window.pwned = 2">'), text);
  assert.equal(await answer.locator('script, img').count(), 0);
  assert.equal(await page.locator('img').count(), 0);
  await sleep(100);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.ok(!requested.includes('/x'), `the page fetched ${requested}`);
});

test("the server's refusal is shown under the message, and the turn is not kept", { skip }, async () => {
  await page.fill('#max-tokens', '5000');  // past the server's --max-tokens
  const { answer } = await sendAndWatch(page, 'Too long a wish.');
  assert.match(await answer.locator('.stats').textContent(), /^Error: 'max_tokens' is 5000; this server generates at most/);
  await page.fill('#max-tokens', '100');  // the next test's history has no trace of it
});

test('the second message carries the history, the system prompt first', { skip }, async () => {
  const first = await answers(page).first().locator('.answer').textContent();
  await page.fill('#system', 'Answer briefly.');
  const sent = page.waitForRequest((r) => r.url().endsWith('/v1/chat/completions'));
  const { answer } = await sendAndWatch(page, 'And again?\nShorter.');
  const body = (await sent).postDataJSON();
  assert.deepEqual(body.messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);  // not the refused turn
  assert.equal(body.messages[0].content, 'Answer briefly.');
  assert.equal(body.messages[1].content, 'Show me some formatting.');
  assert.ok(passage.startsWith(body.messages[2].content), 'the first answer as the model wrote it (Markdown)');
  assert.ok(body.messages[2].content.includes('**bold**') && first.includes('bold'));
  assert.equal(body.messages[3].content, 'And again?\nShorter.');  // Shift+Enter: a new line, not sent
  assert.equal(body.stream, true);
  assert.equal(body.max_tokens, 100);
  assert.equal(body.temperature, 0);
  assert.match(await answer.locator('.stats').textContent(), /answer 100 tokens/);
});

test('Stop ends the answer mid-way and the server cancels its generation', { skip }, async () => {
  const before = await cancellations(mock);
  await page.fill('#max-tokens', '2000');
  const count = await answers(page).count();
  await page.fill('#prompt', 'A long one, please.');
  await page.press('#prompt', 'Enter');
  const answer = answers(page).nth(count);
  const body = answer.locator('.answer');
  for (const deadline = Date.now() + 60000; (await body.textContent().catch(() => '')).length < 20; await sleep(10))
    assert.ok(Date.now() < deadline, 'no answer came');
  assert.equal(await page.isEnabled('#send'), false);
  await page.click('#stop');
  await answer.locator('.stats', { hasText: 'Stopped.' }).waitFor();
  const stopped = await body.textContent();
  await sleep(300);  // 30 more tokens' time
  assert.equal(await body.textContent(), stopped);
  assert.ok(stopped.length < passage.length * 3, 'stopped long before its 2000 tokens');
  for (const deadline = Date.now() + 60000; (await cancellations(mock)) !== before + 1; await sleep(10))
    assert.ok(Date.now() < deadline, 'the server counted no cancellation');
  assert.equal(await page.isEnabled('#send'), true);
});

// A model of Qwen3's vocabulary (the mock engine answering) thinks before it answers.
test('reasoning is folded above the answer', { skip }, async () => {
  const server = await startServer(['--engine', 'mock', '--model', qwen3VocabModel,
    '--mock-passage', '<think>Weighing it up.</think>\n\nThe answer is **42**.\n']);
  const p = await browser.newPage();
  try {
    await p.goto(`${server.baseURL}/`);
    await openSettings(p);
    await p.fill('#temperature', '0');
    await p.fill('#max-tokens', '17');  // the passage once, in that vocabulary
    const { answer } = await sendAndWatch(p, 'What is it?');
    const reasoning = answer.locator('details.reasoning');
    assert.equal(await reasoning.isVisible(), true);
    assert.equal(await reasoning.getAttribute('open'), null, 'folded');
    assert.equal(await reasoning.locator('summary').textContent(), 'Reasoning');
    assert.equal(await reasoning.locator('div').textContent(), 'Weighing it up.');
    assert.equal((await answer.locator('.answer').textContent()).trim(), 'The answer is 42.');
    assert.equal(await answer.locator('.answer strong').textContent(), '42');
  } finally {
    await p.close();
    assert.equal(await server.stop(), 0);
  }
});

test('a real model answers in the page', { skip: skipRealModel }, async () => {
  const server = await startServer(['--model', pycoder]);
  const p = await browser.newPage({ viewport: { width: 1000, height: 720 } });
  try {
    await p.goto(`${server.baseURL}/`);
    await p.locator('#model', { hasText: 'pycoder' }).waitFor();
    await openSettings(p);
    await p.fill('#system', 'You write Python.');
    await p.fill('#max-tokens', '160');
    await p.click('details.settings summary');  // folded again, for the picture
    const { answer } = await sendAndWatch(p, 'Write a class that caches results.');
    assert.ok((await answer.locator('.answer').textContent()).trim().length > 0);
    assert.match(await answer.locator('.stats').textContent(), /TTFT \d+ ms .* answer \d+ tokens/);
    // The second turn's prompt begins with the first's: the prefix cache has some of it.
    const second = await sendAndWatch(p, 'Add a docstring.');
    const cached = (await second.answer.locator('.stats').textContent()).match(/\((\d+) cached\)/)[1];
    assert.ok(Number(cached) > 0, 'nothing of the history was cached');
    const picture = join(mkdtempSync(join(tmpdir(), 'chat-page-')), 'chat-page.png');
    await p.screenshot({ path: picture });
    if (process.env.NANOSERVE_SCREENSHOT === '1')
      copyFileSync(picture, fileURLToPath(new URL('../../docs/chat-page.png', import.meta.url)));
  } finally {
    await p.close();
    assert.equal(await server.stop(), 0);
  }
});
