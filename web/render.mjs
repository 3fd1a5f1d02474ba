// The page's nodes for markdown.mjs's tree. Text reaches the page only as text nodes and links
// only with the http(s) hrefs the parser let through: whatever the model writes, no markup of
// its own can appear (nothing here parses HTML).

export function renderBlocks(blocks) {
  const fragment = document.createDocumentFragment();
  for (const block of blocks) fragment.append(renderBlock(block));
  return fragment;
}

function renderBlock(block) {
  switch (block.type) {
    case 'heading':
      return withChildren(document.createElement(`h${block.level}`), block.children);
    case 'paragraph':
      return withChildren(document.createElement('p'), block.children);
    case 'code': {
      const pre = document.createElement('pre');
      const code = document.createElement('code');
      code.textContent = block.text;
      if (block.lang) pre.dataset.lang = block.lang;  // shown by the style sheet
      pre.append(code);
      return pre;
    }
    case 'list': {
      const list = document.createElement(block.ordered ? 'ol' : 'ul');
      if (block.ordered && block.start !== 1) list.start = block.start;
      for (const item of block.items) list.append(renderItem(item));
      return list;
    }
    case 'rule':
      return document.createElement('hr');
    default:
      throw new Error(`no rendering for a ${block.type} block`);
  }
}

// An item of one paragraph holds its text directly (a tight list), any other its blocks.
function renderItem(blocks) {
  const li = document.createElement('li');
  if (blocks.length === 1 && blocks[0].type === 'paragraph') return withChildren(li, blocks[0].children);
  li.append(renderBlocks(blocks));
  return li;
}

function withChildren(element, inlines) {
  for (const node of inlines) element.append(renderInline(node));
  return element;
}

function renderInline(node) {
  switch (node.type) {
    case 'text':
      return document.createTextNode(node.text);
    case 'code': {
      const code = document.createElement('code');
      code.textContent = node.text;
      return code;
    }
    case 'em':
    case 'strong':
      return withChildren(document.createElement(node.type), node.children);
    case 'link': {
      const a = document.createElement('a');
      a.href = node.href;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      return withChildren(a, node.children);
    }
    default:
      throw new Error(`no rendering for a ${node.type} span`);
  }
}
