// docs/guide.md runs as written. The guide's fenced blocks, by their info string:
//
// - ```sh: run, in the guide's order, as ONE bash session (`set -euo pipefail`, stderr joined to
//   stdout), so that a server started with `&` in one block answers the next. The session starts
//   in an empty temporary folder that is also $HOME (the guide's ~/nanoserve-guide and the model
//   cache land there), with the binary under test first on PATH as `nanoserve`, HF_HUB_OFFLINE=1,
//   and a 300 s limit against a hang (it takes seconds; how fast is not its question). Whether it
//   passes or fails, every process it started is killed at the end.
// - ```sh manual: not run (root, the network, or many minutes). Each line must pass a check of
//   what it names, or the test fails; see manualChecks below.
// - ```text: the output of the sh block before it. Its shape is checked against the real output:
//   a JSON text's keys must all be in the real JSON (values differ); otherwise each line's first
//   word must begin a line of the real output (a line `...` marks left-out lines; a line that
//   begins with a number continues the one before).
// - any other info string fails the test.
//
// Before the session, the sh blocks are rewritten by the rules in `rewrites` (each must match at
// least once, so that a rule cannot outlive the text it rewrites):
// 1. 8080, the guide's port, becomes a free port.
// 2. `synth --preset qwen2.5-0.5b` gets `--dims layers=2,vocab=4096`: the guide's 529 MB
//    random-weight model keeps its layers' shape but has 2 of them and a 4,096-token vocabulary
//    (36 MB), so every command that reads it runs in about a second.
// 3. The Hugging Face name Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q8_0 (which needs the network) becomes
//    that synthesized file, qwen2.5-0.5b-Q8_0.gguf, as the guide says to do without network.
//
// Needs bash, curl, jq and gnuplot (the guide's tools); skipped, saying which is missing, except
// under CI=true or NANOSERVE_REQUIRE_SHARED=1, where it fails. NANOSERVE_BINARY names the binary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { binary, required } from './serve_helpers.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const guidePath = join(root, 'docs/guide.md');
const sessionLimitMs = 300_000;
const smallDims = 'layers=2,vocab=4096';

const tools = ['bash', 'curl', 'jq', 'gnuplot'];
const missingTool = tools.find((t) => spawnSync('bash', ['-c', `command -v ${t}`]).status !== 0);
const skip = !required && missingTool && `${missingTool} is not installed (the guide uses ${tools.join(', ')})`;

// The guide's fenced blocks in order: { info, text, line } (the line of the opening fence).
function fencedBlocks(markdown) {
  const blocks = [];
  let open = null;
  markdown.split('\n').forEach((line, i) => {
    if (!open) {
      const m = line.match(/^```(.*)$/);
      if (m) open = { info: m[1].trim(), lines: [], line: i + 1 };
    } else if (line === '```') {
      blocks.push({ info: open.info.split(/\s+/).join(' '), text: open.lines.join('\n'), line: open.line });
      open = null;
    } else {
      open.lines.push(line);
    }
  });
  assert.equal(open, null, `docs/guide.md: the block at line ${open?.line} is not closed`);
  return blocks;
}

const kindOf = (b) => (b.info === 'sh' ? 'run' : b.info === 'sh manual' ? 'manual' : b.info === 'text' ? 'output' : null);

// A manual block's lines (continuations joined), each checked by the first rule that matches it.
const makefile = readFileSync(join(root, 'Makefile'), 'utf8');
const manualChecks = [
  // apt-get install: every package named is a command on this machine (the guide's tools).
  [/^(?:sudo )?apt-get install (?:-y )?(.+)$/, (m) => {
    for (const pkg of m[1].split(/\s+/))
      assert.equal(spawnSync('bash', ['-c', `command -v ${pkg}`]).status, 0, `${pkg} is not installed here`);
  }],
  // A script of the repository: exists and is executable.
  [/^(?:sudo )?(?:\.\/)?(scripts\/\S+)$/, (m) => accessSync(join(root, m[1]), constants.X_OK)],
  // make TARGET...: each target is a rule of the Makefile (never `make -n`: recipes that call
  // $(MAKE) run even then, and `make -n test` would run these tests).
  [/^make((?: [a-z][\w-]*)+)$/, (m) => {
    for (const target of m[1].trim().split(' '))
      assert.ok(new RegExp(`^${target}:`, 'm').test(makefile), `the Makefile has no target ${target}`);
  }],
  // nanoserve SUBCOMMAND...: its --help answers (the words before the first flag or argument).
  [/^nanoserve( .*)?$/, (m) => {
    const words = [];
    for (const w of (m[1] ?? '').trim().split(/\s+/)) {
      if (!/^[a-z][a-z-]*$/.test(w)) break;
      words.push(w);
    }
    const r = spawnSync(binary, [...words, '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0, `nanoserve ${words.join(' ')} --help failed:\n${r.stdout}${r.stderr}`);
  }],
];

function checkManualBlock(block) {
  const lines = block.text.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.trim()).filter(Boolean);
  for (const line of lines) {
    const rule = manualChecks.find(([re]) => re.test(line));
    assert.ok(rule, `docs/guide.md:${block.line}: no check for the manual line: ${line}`);
    try {
      rule[1](line.match(rule[0]));
    } catch (error) {
      throw new Error(`docs/guide.md:${block.line}: ${line}: ${error.message}`);
    }
  }
}

// Whether a text block's shape is in the real output of its command.
function checkOutput(expected, actual, where) {
  let shown;
  try {
    shown = JSON.parse(expected.text);
  } catch {
    shown = undefined;
  }
  if (shown !== undefined && typeof shown === 'object') {
    // jq pretty-prints from a `{` line to a `}` line; a server's log line may come before or after.
    const json = actual.match(/^\{$[\s\S]*?^\}$/m);
    assert.ok(json, `${where}: the output has no JSON object:\n${actual}`);
    const real = JSON.parse(json[0]);
    const keysIn = (a, b, path) => {
      for (const [k, v] of Object.entries(a)) {
        assert.ok(Object.hasOwn(b, k), `${where}: the guide shows ${path}${k}, the output has no such key:\n${json[0]}`);
        if (v && typeof v === 'object' && !Array.isArray(v)) keysIn(v, b[k], `${path}${k}.`);
      }
    };
    keysIn(shown, real, '');
    return;
  }
  const firstWords = new Set(actual.split('\n').map((l) => l.trim().split(/\s+/)[0]).filter(Boolean));
  for (const line of expected.text.split('\n')) {
    const word = line.trim().split(/\s+/)[0];
    if (!word || word === '...' || /^[\d.]/.test(word)) continue;  // a value, not a label
    assert.ok(firstWords.has(word), `${where}: the guide shows a line beginning "${word}", the output has none:\n${actual}`);
  }
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Runs `script` in bash as its own process group; resolves to { code, output } when bash exits
// (or is killed at the limit), after every process of the group is gone.
async function runSession(script, options) {
  const child = spawn('bash', ['-c', script], { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text) => { output += text; });
  child.stderr.setEncoding('utf8').on('data', (text) => { output += text; });
  const closed = new Promise((resolve) => child.once('close', resolve));
  const killGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone
    }
  };
  let timedOut = false;
  const timer = setTimeout(async () => {
    timedOut = true;
    killGroup('SIGINT');  // bench suite stops its servers on Ctrl-C
    await sleep(3000);
    killGroup('SIGKILL');
  }, sessionLimitMs);
  const code = await new Promise((resolve) => child.once('exit', (c, signal) => resolve(c ?? signal)));
  clearTimeout(timer);
  killGroup('SIGTERM');  // a server the session left behind holds the pipes open
  await Promise.race([closed, sleep(5000, undefined, { ref: false })]);
  killGroup('SIGKILL');
  return { code, output, timedOut };
}

test('every command of docs/guide.md runs as written', { skip, timeout: sessionLimitMs + 30_000 }, async () => {
  const blocks = fencedBlocks(readFileSync(guidePath, 'utf8'));
  for (const b of blocks) assert.ok(kindOf(b), `docs/guide.md:${b.line}: unknown block info string "${b.info}"`);

  // The manual blocks name what exists.
  for (const b of blocks.filter((b) => kindOf(b) === 'manual')) checkManualBlock(b);

  // Each text block shows the output of the sh block just before it.
  blocks.forEach((b, i) => {
    if (kindOf(b) === 'output')
      assert.equal(kindOf(blocks[i - 1] ?? {}), 'run', `docs/guide.md:${b.line}: a text block must follow an sh block`);
  });

  const home = mkdtempSync(join(tmpdir(), 'nanoserve-guide-'));
  try {
    const bin = join(home, '.bin');
    mkdirSync(bin);
    symlinkSync(realpathSync(binary), join(bin, 'nanoserve'));

    const port = String(await freePort());
    const rewrites = [
      { rule: '8080 → a free port', from: /\b8080\b/g, to: port },
      { rule: 'synth --preset qwen2.5-0.5b → 2 layers, 4,096 tokens', from: /(synth --preset qwen2\.5-0\.5b)(?= )/g,
        to: `$1 --dims ${smallDims}` },
      { rule: 'the Hugging Face name → the synthesized file', from: /Qwen\/Qwen2\.5-0\.5B-Instruct-GGUF:Q8_0/g,
        to: 'qwen2.5-0.5b-Q8_0.gguf' },
    ];
    const used = new Set();
    const runs = blocks.filter((b) => kindOf(b) === 'run').map((b) => {
      let text = b.text;
      for (const r of rewrites) {
        if (r.from.test(text)) used.add(r.rule);
        r.from.lastIndex = 0;
        text = text.replace(r.from, r.to);
      }
      return { ...b, text };
    });
    assert.ok(runs.length > 0, 'docs/guide.md has no sh blocks');
    for (const r of rewrites) assert.ok(used.has(r.rule), `the rewrite rule "${r.rule}" matched nothing in docs/guide.md`);

    const marker = (i) => `@@guide-block ${i}@@`;
    const script = [
      'set -euo pipefail',
      'exec 2>&1',
      // On any exit, the servers the guide started in the background.
      'trap \'kill $(jobs -p) 2>/dev/null || true\' EXIT',
      ...runs.flatMap((b, i) => [`printf '\\n%s\\n' '${marker(i)}'`, b.text]),
      `printf '\\n%s\\n' '${marker(runs.length)}'`,
    ].join('\n');
    const env = { ...process.env, HOME: home, PATH: `${bin}:${process.env.PATH}`, HF_HUB_OFFLINE: '1' };
    delete env.XDG_CACHE_HOME;
    const started = Date.now();
    const { code, output, timedOut } = await runSession(script, { cwd: home, env });

    // The output of each block, between its marker and the next.
    const outputs = [];
    let reached = -1;
    for (let i = 0; i < runs.length; ++i) {
      const begin = output.indexOf(marker(i));
      if (begin < 0) break;
      reached = i;
      const end = output.indexOf(marker(i + 1));
      outputs.push(output.slice(begin + marker(i).length, end < 0 ? undefined : end));
    }
    const failed = runs[Math.max(reached, 0)];
    // The session's output up to the failure, with the earlier blocks' (a server's error is there).
    const tail = `--- the session's output, to the end ---\n${output.slice(-6000)}`;
    assert.ok(!timedOut, `the guide's commands ran past ${sessionLimitMs / 1000} s, in the block at ` +
      `docs/guide.md:${failed.line}:\n${failed.text}\n${tail}`);
    assert.equal(code, 0, `the block at docs/guide.md:${failed.line} failed (exit ${code}):\n${failed.text}\n${tail}`);
    assert.ok(output.includes(marker(runs.length)), `the session ended before its last block:\n${output}`);
    console.log(`docs/guide.md: ${runs.length} sh blocks ran in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    blocks.forEach((b, i) => {
      if (kindOf(b) !== 'output') return;
      const run = runs.findIndex((r) => r.line === blocks[i - 1].line);
      checkOutput(b, outputs[run], `docs/guide.md:${b.line}`);
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
