// The batch engine at work, live: fed by the server's event stream GET /v1/engine/events (a
// snapshot after the engine's steps, at most ~20 a second and at once after a preemption).
import { Api } from '/api.mjs';
import { askForKey } from '/key_prompt.mjs';
import { SseReader } from '/sse.mjs';
import { svg, html, colourOf, ms } from '/lab/draw.mjs';

const api = new Api(askForKey);
const STEPS_SHOWN = 200;
const steps = [];         // the last STEPS_SHOWN step records
const preemptions = [];   // {time_ms, id}, newest first
let firstEventAt = null;  // the server's time_ms of the first snapshot, for the log's times

const runsToIds = (runs) => runs.flatMap(([first, count]) => Array.from({ length: count }, (_, i) => first + i));

function drawPool(s) {
  const owner = new Map();  // block -> sequence id
  for (const q of s.sequences) for (const b of runsToIds(q.blocks)) owner.set(b, q.id);
  const cached = new Set(runsToIds(s.cached_blocks));
  const shared = new Set(runsToIds(s.shared_blocks));
  const columns = Math.max(16, Math.ceil(Math.sqrt(s.total_blocks * 2)));
  const cell = 12;
  const rows = Math.ceil(s.total_blocks / columns);
  const grid = svg('svg', { viewBox: `0 0 ${columns * cell} ${rows * cell}`, role: 'img',
    'aria-label': `${s.total_blocks} KV blocks of ${s.block_size} positions` });
  for (let b = 0; b < s.total_blocks; ++b) {
    const id = owner.get(b);
    const fill = id ? colourOf(id) : cached.has(b) ? 'var(--cached)' : 'var(--free)';
    const what = id ? `held by ${id}${shared.has(b) ? ' and others (shared prefix)' : ''}` :
      cached.has(b) ? 'cached: a published prefix nobody holds now' : 'free';
    const rect = svg('rect', { x: (b % columns) * cell + 1, y: Math.floor(b / columns) * cell + 1, width: cell - 2,
      height: cell - 2, fill, stroke: shared.has(b) ? 'var(--fg)' : '#0002', 'stroke-width': shared.has(b) ? 2 : 1,
      class: id ? 'block held' : cached.has(b) ? 'block cached' : 'block free' }, `block ${b}: ${what}`);
    if (id) rect.dataset.seq = id;
    grid.append(rect);
  }
  document.getElementById('pool').replaceChildren(grid);
}

function drawSequences(s) {
  const body = document.getElementById('sequences');
  if (s.sequences.length === 0) {
    body.replaceChildren(html('tr', '', 'empty'));
    body.firstChild.append(html('td', 'no sequence: the engine is idle'));
    body.firstChild.firstChild.colSpan = 7;
    return;
  }
  body.replaceChildren(...s.sequences.map((q) => {
    const row = html('tr', '', q.running ? 'running' : 'waiting');
    row.dataset.id = q.id;
    const swatch = html('span', '', 'swatch');
    swatch.style.background = colourOf(q.id);
    const blocks = q.blocks.reduce((n, [, count]) => n + count, 0);
    const cells = [html('td'), html('td', q.id), html('td', q.running ? 'running' : 'waiting'),
      html('td', String(q.tokens), 'num'), html('td', String(q.cached), 'num'), html('td', String(blocks), 'num'),
      html('td', String(q.preemptions), 'num')];
    cells[0].append(swatch);
    row.append(...cells);
    return row;
  }));
}

function drawSteps() {
  const width = 600, height = 120;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'rows per step' });
  const most = Math.max(1, ...steps.map((r) => r.rows));
  const w = width / STEPS_SHOWN;
  steps.forEach((r, i) => {
    const decode = r.rows - r.prefill_rows - r.draft_rows;
    let y = height;
    for (const [rows, fill] of [[decode, 'var(--decode)'], [r.draft_rows, 'var(--verify)'], [r.prefill_rows, 'var(--prefill)']]) {
      const h = (rows / most) * (height - 2);
      if (h <= 0) continue;
      y -= h;
      chart.append(svg('rect', { x: i * w, y, width: Math.max(1, w - 0.5), height: h, fill, class: 'step' },
        `step ${r.step}: ${r.rows} rows (${r.prefill_rows} prefill, ${r.draft_rows} draft) for ${r.sequences} sequences, ${ms(r.duration_ms)}`));
    }
  });
  document.getElementById('steps-chart').replaceChildren(chart);
  const last = steps.at(-1);
  document.getElementById('step-facts').textContent = last
    ? `tallest ${most} rows; last step ${last.rows} rows for ${last.sequences} sequences in ${ms(last.duration_ms)}`
    : '';
}

function drawPreemptions() {
  const log = document.getElementById('preemption-log');
  if (preemptions.length === 0) return;
  log.replaceChildren(...preemptions.slice(0, 20).map((p) =>
    html('li', `${ms(p.time_ms - firstEventAt)}: ${p.id} gave its blocks back`)));
}

function show(s) {
  firstEventAt ??= s.time_ms;
  const running = s.sequences.filter((q) => q.running).length;
  document.getElementById('running').textContent = running;
  document.getElementById('waiting').textContent = s.sequences.length - running;
  document.getElementById('steps').textContent = s.steps;
  document.getElementById('blocks-used').textContent = `${s.total_blocks - s.free_blocks} / ${s.total_blocks}`;
  document.getElementById('blocks-cached').textContent = s.cached_blocks.reduce((n, [, c]) => n + c, 0);
  document.getElementById('preemptions').textContent = s.preemptions;
  steps.push(...s.recent_steps);
  steps.splice(0, Math.max(0, steps.length - STEPS_SHOWN));
  for (const id of s.preempted) preemptions.unshift({ time_ms: s.time_ms, id });
  drawPool(s);
  drawSequences(s);
  drawSteps();
  drawPreemptions();
}

async function watch() {
  const status = document.getElementById('status');
  for (;;) {
    try {
      const response = await api.fetch('/v1/engine/events');
      if (!response.ok) throw new Error((await response.json()).error?.message ?? `HTTP ${response.status}`);
      status.textContent = 'live';
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const events = new SseReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const data of events.push(value)) show(JSON.parse(data));
      }
      status.textContent = 'the server ended the stream; reconnecting…';
    } catch (error) {
      status.textContent = `${error.message}; retrying…`;
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

watch();
