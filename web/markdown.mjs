// A small Markdown reader for the model's answers: text in, a tree of plain objects out. It
// knows no DOM and makes no HTML (render.mjs builds the page's nodes from the tree), so markup
// in the text can only ever be text.
//
// Blocks: paragraphs, ATX headings (# to ######), fenced code (``` or ~~~; the info string's
// first word is the language; a fence not closed yet runs to the end, as while an answer
// streams), code indented by four spaces, lists (-, *, + or 1. 1)) whose items hold blocks, and
// rules (---).
// Inline: `code`, *em* and _em_, **strong** and __strong__ (nested), [text](url) where url is an
// absolute http(s) URL (anything else stays text), and backslash escapes.
//
// Tree: blocks are {type: 'paragraph' | 'heading', level?, children}, {type: 'code', lang,
// text}, {type: 'list', ordered, start, items: [blocks]} or {type: 'rule'}; inline nodes are
// {type: 'text' | 'code', text}, {type: 'em' | 'strong', children} or {type: 'link', href,
// children}.

const FENCE = /^( {0,3})(`{3,}|~{3,})\s*(\S*)/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:[ \t]+|$)/;
const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;

export function parseMarkdown(text) {
  return parseBlocks(text.replace(/\r\n?/g, '\n').split('\n'));
}

function parseBlocks(lines) {
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (isBlank(line)) {
      i += 1;
    } else if (indentOf(line) >= 4) {
      i = readIndentedCode(lines, i, blocks);
    } else if ((m = FENCE.exec(line)) && !(m[2][0] === '`' && line.slice(m[0].length).includes('`'))) {
      i = readFence(lines, i, m, blocks);
    } else if ((m = HEADING.exec(line))) {
      blocks.push({ type: 'heading', level: m[1].length, children: parseInline(m[2] ?? '') });
      i += 1;
    } else if (RULE.test(line)) {
      blocks.push({ type: 'rule' });
      i += 1;
    } else if (LIST_ITEM.test(line)) {
      i = readList(lines, i, blocks);
    } else {
      i = readParagraph(lines, i, blocks);
    }
  }
  return blocks;
}

function isBlank(line) {
  return line.trim() === '';
}

function indentOf(line) {
  return line.length - line.trimStart().length;
}

// Whether `line` begins a block other than a paragraph (and so ends the paragraph before it).
function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || LIST_ITEM.test(line);
}

function readFence(lines, start, [, indent, fence, lang], blocks) {
  const closing = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`);
  const code = [];
  let i = start + 1;
  for (; i < lines.length && !closing.test(lines[i]); i += 1) {
    const line = lines[i];
    code.push(line.slice(Math.min(indent.length, indentOf(line))));
  }
  blocks.push({ type: 'code', lang, text: code.join('\n') });
  return i + 1;  // past the closing fence (or the end)
}

// Lines indented by four spaces or more (and the blank ones between them), less those four.
function readIndentedCode(lines, start, blocks) {
  let end = start;
  for (let i = start; i < lines.length && (isBlank(lines[i]) || indentOf(lines[i]) >= 4); i += 1)
    if (!isBlank(lines[i])) end = i + 1;
  blocks.push({ type: 'code', lang: '', text: lines.slice(start, end).map((line) => line.slice(4)).join('\n') });
  return end;
}

function readParagraph(lines, start, blocks) {
  const text = [lines[start].trim()];
  let i = start + 1;
  for (; i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i]); i += 1) text.push(lines[i].trim());
  blocks.push({ type: 'paragraph', children: parseInline(text.join('\n')) });
  return i;
}

// The kind of list an item's marker starts: its bullet, or its number's delimiter.
function listKind(marker) {
  return /\d/.test(marker) ? `1${marker.at(-1)}` : marker;
}

// A list: its items while they have the first one's kind. An item's lines are its first line's
// text and the lines after it indented to that text (or lazily continuing its paragraph); they
// are read as blocks of their own.
function readList(lines, start, blocks) {
  const first = LIST_ITEM.exec(lines[start]);
  const kind = listKind(first[2]);
  const ordered = kind.startsWith('1');
  const list = { type: 'list', ordered, start: ordered ? parseInt(first[2], 10) : 1, items: [] };
  let i = start;
  for (;;) {
    const m = LIST_ITEM.exec(lines[i]);
    const contentColumn = m[0].length === lines[i].length ? m[0].length + 1 : m[0].length;
    const item = [lines[i].slice(m[0].length)];
    i += 1;
    while (i < lines.length) {
      const line = lines[i];
      if (isBlank(line)) {
        let next = i;
        while (next < lines.length && isBlank(lines[next])) next += 1;
        if (next === lines.length || indentOf(lines[next]) < contentColumn) break;
        item.push(...lines.slice(i, next).map(() => ''));
        i = next;
      } else if (indentOf(line) >= contentColumn) {
        item.push(line.slice(contentColumn));
        i += 1;
      } else if (!startsBlock(line) && !isBlank(item.at(-1))) {
        item.push(line.trim());
        i += 1;
      } else {
        break;
      }
    }
    list.items.push(parseBlocks(item));
    // The next item may follow blank lines.
    let next = i;
    while (next < lines.length && isBlank(lines[next])) next += 1;
    const m2 = next < lines.length && LIST_ITEM.exec(lines[next]);
    if (!m2 || listKind(m2[2]) !== kind) break;
    i = next;
  }
  blocks.push(list);
  return i;
}

export function parseInline(text) {
  const nodes = [];
  let plain = '';
  const flush = () => {
    if (plain) nodes.push({ type: 'text', text: plain });
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && ASCII_PUNCTUATION.test(text[i + 1] ?? '')) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    const span = (c === '`' && readCodeSpan(text, i)) || (c === '[' && readLink(text, i)) ||
      ((c === '*' || c === '_') && readEmphasis(text, i));
    if (span) {
      flush();
      nodes.push(span.node);
      i = span.end;
    } else if (c === '`' || c === '*' || c === '_') {
      // A run that opens nothing stays text whole: a part of it must not pair up later.
      const run = runLength(text, i);
      plain += text.slice(i, i + run);
      i += run;
    } else {
      plain += c;
      i += 1;
    }
  }
  flush();
  return nodes;
}

// How many times the character at `at` repeats from there.
function runLength(text, at) {
  let end = at;
  while (text[end] === text[at]) end += 1;
  return end - at;
}

// Where the next run of exactly `length` backticks starts after `from`; -1 when none does.
function closingBackticks(text, from, length) {
  for (let i = from; i < text.length;) {
    const run = text[i] === '`' ? runLength(text, i) : 0;
    if (run === length) return i;
    i += Math.max(run, 1);
  }
  return -1;
}

function readCodeSpan(text, at) {
  const length = runLength(text, at);
  const close = closingBackticks(text, at + length, length);
  if (close < 0) return null;
  let code = text.slice(at + length, close).replace(/\n/g, ' ');
  // One space each side lets a span begin or end with a backtick: `` `x` ``.
  if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim()) code = code.slice(1, -1);
  return { node: { type: 'code', text: code }, end: close + length };
}

// [text](url): a link only when url is an absolute http(s) URL; anything else (javascript:,
// data:, a relative path) leaves the whole of it as text.
function readLink(text, at) {
  const labelEnd = text.indexOf(']', at + 1);
  if (labelEnd < 0 || text[labelEnd + 1] !== '(') return null;
  let depth = 0;
  let end = labelEnd + 2;
  for (; end < text.length; end += 1) {
    if (text[end] === '(') depth += 1;
    if (text[end] === ')' && depth-- === 0) break;
  }
  if (end === text.length) return null;
  const target = text.slice(labelEnd + 2, end).trim().split(/\s+/)[0];  // a title after it is dropped
  const href = safeHref(target.startsWith('<') && target.endsWith('>') ? target.slice(1, -1) : target);
  if (!href) return null;
  return { node: { type: 'link', href, children: parseInline(text.slice(at + 1, labelEnd)) }, end: end + 1 };
}

// `url` when it is an absolute http: or https: URL (as the URL parser reads it, so that case,
// spaces or control characters cannot disguise another scheme); null otherwise.
export function safeHref(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
}

// A run of * or _ opens emphasis when followed by a non-space, and closes it when preceded by
// one; _ also not inside a word, so that snake_case_names stay text.
function canOpen(text, at, run) {
  const after = text[at + run] ?? ' ';
  const before = text[at - 1] ?? ' ';
  return !/\s/.test(after) && !(text[at] === '_' && WORD_CHARACTER.test(before));
}

function canClose(text, at, run) {
  const before = text[at - 1] ?? ' ';
  const after = text[at + run] ?? ' ';
  return !/\s/.test(before) && !(text[at] === '_' && WORD_CHARACTER.test(after));
}

// *em*, **strong**, ***both***: the span ends at the first run of its character that can close
// it once the inner spans opened meanwhile are closed.
function readEmphasis(text, at) {
  const length = runLength(text, at);
  if (length > 3 || !canOpen(text, at, length)) return null;
  const close = closingEmphasis(text, at + length, text[at], length);
  if (close < 0) return null;
  const children = parseInline(text.slice(at + length, close));
  const node = length === 1 ? { type: 'em', children }
    : length === 2 ? { type: 'strong', children }
    : { type: 'strong', children: [{ type: 'em', children }] };
  return { node, end: close + length };
}

function closingEmphasis(text, from, char, length) {
  const inner = [];  // the lengths of the runs that opened inner spans, innermost last
  for (let i = from; i < text.length;) {
    const c = text[i];
    if (c === '\\') {
      i += 2;
    } else if (c === '`') {
      const span = readCodeSpan(text, i);
      i = span ? span.end : i + runLength(text, i);
    } else if (c === char) {
      const run = runLength(text, i);
      if (canClose(text, i, run)) {
        // A run closes inner spans first (**a *b***), then ours with what is left of it.
        let left = run;
        while (left > 0 && inner.length > 0) {
          const open = inner.pop();
          if (open > left) inner.push(open - left);
          left -= Math.min(open, left);
        }
        if (left >= length && inner.length === 0) return i + run - left;
      } else if (canOpen(text, i, run)) {
        inner.push(run);
      }
      i += run;
    } else {
      i += 1;
    }
  }
  return -1;
}
