// The chat page's Markdown parser (web/markdown.mjs), without a browser: the tree it makes of
// what models write. Markup in the text must come out as text, links only with http(s) hrefs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMarkdown, parseInline, safeHref } from '../../web/markdown.mjs';

const text = (t) => ({ type: 'text', text: t });
const paragraph = (...children) => ({ type: 'paragraph', children });

test('fenced code blocks keep their text as it is', () => {
  const source = 'Run:\n\n```python\ndef f(x):\n\n    return x * 2  # **not bold**\n```\nAfter.';
  assert.deepEqual(parseMarkdown(source), [
    paragraph(text('Run:')),
    { type: 'code', lang: 'python', text: 'def f(x):\n\n    return x * 2  # **not bold**' },
    paragraph(text('After.')),
  ]);
  // Tildes, a longer fence holding a shorter one, and a fence still open (an answer streaming).
  assert.deepEqual(parseMarkdown('~~~\na\n~~~'), [{ type: 'code', lang: '', text: 'a' }]);
  assert.deepEqual(parseMarkdown('````md\n```\nx\n```\n````')[0].text, '```\nx\n```');
  assert.deepEqual(parseMarkdown('```js\nlet a = 1;\nlet b'), [{ type: 'code', lang: 'js', text: 'let a = 1;\nlet b' }]);
});

test('code indented by four spaces is a block of its own, but does not interrupt a paragraph', () => {
  assert.deepEqual(parseMarkdown('    def f():\n\n        return 1\n\nText\n    more text'), [
    { type: 'code', lang: '', text: 'def f():\n\n    return 1' },
    paragraph(text('Text\nmore text')),
  ]);
});

test('inline code is literal', () => {
  assert.deepEqual(parseInline('call `f(*args)` now'), [text('call '), { type: 'code', text: 'f(*args)' }, text(' now')]);
  assert.deepEqual(parseInline('`` a`b ``'), [{ type: 'code', text: 'a`b' }]);
  assert.deepEqual(parseInline('an ` alone'), [text('an ` alone')]);
});

test('emphasis nests', () => {
  assert.deepEqual(parseInline('**bold *italic* bold**'), [{
    type: 'strong',
    children: [text('bold '), { type: 'em', children: [text('italic')] }, text(' bold')],
  }]);
  assert.deepEqual(parseInline('*it **both** it*'), [{
    type: 'em',
    children: [text('it '), { type: 'strong', children: [text('both')] }, text(' it')],
  }]);
  assert.deepEqual(parseInline('**a *b***'), [{
    type: 'strong', children: [text('a '), { type: 'em', children: [text('b')] }],
  }]);
  assert.deepEqual(parseInline('***x***'), [{ type: 'strong', children: [{ type: 'em', children: [text('x')] }] }]);
  assert.deepEqual(parseInline('__a__ and _b_'), [
    { type: 'strong', children: [text('a')] }, text(' and '), { type: 'em', children: [text('b')] },
  ]);
});

test('what only looks like emphasis stays text', () => {
  assert.deepEqual(parseInline('snake_case_name and 2 * 3 * 4'), [text('snake_case_name and 2 * 3 * 4')]);
  assert.deepEqual(parseInline('**unclosed'), [text('**unclosed')]);
  assert.deepEqual(parseInline('\\*escaped\\*'), [text('*escaped*')]);
});

test('links need an absolute http(s) URL', () => {
  assert.deepEqual(parseInline('see [the *docs*](https://example.com/a_(b)?q=1) now'), [
    text('see '),
    { type: 'link', href: 'https://example.com/a_(b)?q=1', children: [text('the '), { type: 'em', children: [text('docs')] }] },
    text(' now'),
  ]);
  for (const href of ['javascript:alert(1)', ' JavaScript:alert(1)', 'java\tscript:alert(1)', 'data:text/html,<b>x',
    'vbscript:x', '/relative', '//example.com/x', 'file:///etc/passwd']) {
    const source = `[x](${href})`;
    assert.deepEqual(parseInline(source), [text(source)], source);
  }
  assert.equal(safeHref('javascript:alert(1)'), null);
  assert.equal(safeHref('HTTP://Example.com'), 'http://example.com/');
});

test('HTML is passed through as text', () => {
  const html = '<script>alert(1)</script><img src=x onerror="alert(2)">';
  assert.deepEqual(parseMarkdown(html), [paragraph(text(html))]);
  assert.deepEqual(parseMarkdown(`# <b>title</b>`), [{ type: 'heading', level: 1, children: [text('<b>title</b>')] }]);
});

test('headings, paragraphs with their line breaks, rules', () => {
  assert.deepEqual(parseMarkdown('## Plan ##\nline one\nline two\n\n---\n####### seven'), [
    { type: 'heading', level: 2, children: [text('Plan')] },
    paragraph(text('line one\nline two')),
    { type: 'rule' },
    paragraph(text('####### seven')),
  ]);
});

test('lists hold blocks, nested lists and code included', () => {
  const source = '1. first\n2. second\n   - inner *a*\n   - inner b\n\n   ```sh\n   ls -l\n   ```\n3) other list';
  assert.deepEqual(parseMarkdown(source), [
    {
      type: 'list', ordered: true, start: 1, items: [
        [paragraph(text('first'))],
        [
          paragraph(text('second')),
          { type: 'list', ordered: false, start: 1, items: [
            [paragraph(text('inner '), { type: 'em', children: [text('a')] })],
            [paragraph(text('inner b'))],
          ] },
          { type: 'code', lang: 'sh', text: 'ls -l' },
        ],
      ],
    },
    { type: 'list', ordered: true, start: 3, items: [[paragraph(text('other list'))]] },
  ]);
  // A paragraph then a list, without a blank line between (as models write them).
  assert.deepEqual(parseMarkdown('Steps:\n- a\n- b').map((b) => b.type), ['paragraph', 'list']);
});
