// One request's timeline (GET /v1/timelines): a row per recent request, time running left to
// right from its submission. Polled once a second: a timeline is a record, not a live feed.
import { Api } from '/api.mjs';
import { askForKey } from '/key_prompt.mjs';
import { svg, html, ms } from '/lab/draw.mjs';

const api = new Api(askForKey);
const WIDTH = 1000, ROW = 34, AXIS = 18;
const colour = {
  queued: 'var(--queued)', prefill: 'var(--prefill)', recompute: 'var(--recompute)', decode: 'var(--decode)',
  verify: 'var(--verify)',
};

function describe(e) {
  const span = `${ms(e.start_ms)} → ${ms(e.end_ms)}`;
  switch (e.kind) {
    case 'queued': return `queued ${span}${e.cached_tokens ? `, ${e.cached_tokens} prompt tokens from the prefix cache` : ''}`;
    case 'write': return `server wrote ${e.bytes} bytes at ${ms(e.start_ms)}`;
    case 'preempted': return `preempted at ${ms(e.start_ms)}: its KV blocks went to older sequences`;
    case 'finished': return `finished at ${ms(e.start_ms)}`;
    default:
      return `step ${e.step}: ${e.kind}, ${e.tokens} of its rows` +
        `${e.kind === 'verify' ? ` (${e.accepted} draft tokens accepted)` : ''}; the step had ` +
        `${e.batch_sequences} sequences, ${e.batch_rows} rows; ${span}`;
  }
}

// Facts a reader checks first: time to the first written text, steps, their batch sizes.
function facts(t) {
  const steps = t.events.filter((e) => e.step !== undefined);
  const firstWrite = t.events.find((e) => e.kind === 'write');
  const end = t.events.find((e) => e.kind === 'finished');
  const preemptions = t.events.filter((e) => e.kind === 'preempted').length;
  const meanBatch = steps.length ? steps.reduce((s, e) => s + e.batch_sequences, 0) / steps.length : 0;
  return [
    firstWrite ? `first text written at ${ms(firstWrite.start_ms)}` : 'no text yet',
    `${steps.length} steps (mean batch ${meanBatch.toFixed(1)} sequences)`,
    `${preemptions} preemption${preemptions === 1 ? '' : 's'}`,
    end ? `ended at ${ms(end.start_ms)}` : 'running',
    t.dropped_events ? `${t.dropped_events} later events not kept` : '',
  ].filter(Boolean).join(' · ');
}

function drawRow(t, span) {
  const x = (v) => (v / span) * WIDTH;
  const chart = svg('svg', { viewBox: `0 0 ${WIDTH} ${ROW + AXIS}`, role: 'img', 'aria-label': `timeline of ${t.id}` });
  chart.append(svg('line', { x1: 0, y1: ROW, x2: WIDTH, y2: ROW, stroke: 'var(--line)' }));
  for (const e of t.events) {
    const left = x(e.start_ms), w = Math.max(1, x(e.end_ms) - left);
    if (e.kind in colour) {
      const share = e.batch_sequences ? 1 / e.batch_sequences : 1;
      const h = e.kind === 'queued' ? 8 : Math.max(3, (ROW - 4) * share);
      chart.append(svg('rect', { x: left, y: ROW - h, width: w, height: h, fill: colour[e.kind], class: `ev ${e.kind}` },
        describe(e)));
    } else if (e.kind === 'write') {
      chart.append(svg('line', { x1: left, y1: ROW + 1, x2: left, y2: ROW + 6, stroke: 'var(--write)', class: 'ev write' },
        describe(e)));
    } else if (e.kind === 'preempted') {
      chart.append(svg('path', { d: `M${left - 5} 2 L${left + 5} 2 L${left} 11 Z`, fill: 'var(--preempted)', class: 'ev preempted' },
        describe(e)));
    } else if (e.kind === 'finished') {
      chart.append(svg('line', { x1: left, y1: 0, x2: left, y2: ROW, stroke: 'var(--fg)', 'stroke-dasharray': '2 2', class: 'ev finished' },
        describe(e)));
    }
  }
  for (let i = 0; i <= 4; ++i) {
    const label = svg('text', { x: Math.min(WIDTH - 40, (i / 4) * WIDTH + 2), y: ROW + AXIS - 2, 'font-size': 11, fill: 'var(--muted)' });
    label.textContent = ms((i / 4) * span);
    chart.append(label);
  }
  return chart;
}

function draw(timelines) {
  const box = document.getElementById('requests');
  if (timelines.length === 0) return;
  // One time scale for every row, so that rows compare.
  const span = Math.max(1, ...timelines.flatMap((t) => t.events.map((e) => e.end_ms)));
  box.replaceChildren(...timelines.map((t) => {
    const section = html('section', '', 'request');
    section.dataset.id = t.id;
    section.append(html('h2', t.id), html('div', facts(t), 'facts'), drawRow(t, span));
    return section;
  }));
}

async function refresh() {
  const status = document.getElementById('status');
  try {
    const last = document.getElementById('last').value;
    const response = await api.fetch(`/v1/timelines?last=${last}`);
    const body = await response.json();
    if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
    draw(body.data);
    status.textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    status.textContent = error.message;
  }
}

document.getElementById('last').addEventListener('change', refresh);
refresh();
setInterval(refresh, 1000);
