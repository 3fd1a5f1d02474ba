// The chat page: a conversation with the served model through POST /v1/chat/completions,
// streamed token by token. Each answer is rendered as Markdown as it grows, its reasoning (if
// the model thinks aloud) folded above it and the engine's figures for it below.
import { Api } from './api.mjs';
import { askForKey } from './key_prompt.mjs';
import { parseMarkdown } from './markdown.mjs';
import { renderBlocks } from './render.mjs';

const $ = (id) => document.getElementById(id);
const api = new Api(askForKey);
const conversation = $('conversation');
const composer = $('composer');
const prompt = $('prompt');

let model = '';
let history = [];  // the turns so far: {role: 'user' | 'assistant', content}
let running = null;  // the AbortController of the answer being written

api.modelName().then(
  (name) => { model = name; $('model').textContent = name; },
  (error) => { $('model').textContent = `model unknown: ${error.message}`; },
);

prompt.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    composer.requestSubmit();
  }
});

composer.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = prompt.value.trim();
  if (!text || running) return;
  prompt.value = '';
  send(text);
});

$('stop').addEventListener('click', () => running?.abort());

$('new-chat').addEventListener('click', () => {
  running?.abort();
  history = [];
  conversation.replaceChildren();
  prompt.focus();
});

async function send(text) {
  const turns = history;  // "New chat" meanwhile starts another
  turns.push({ role: 'user', content: text });
  appendMessage('user').textContent = text;
  const answer = new AnswerView(appendMessage('assistant'));
  const controller = new AbortController();
  setRunning(controller);
  let content = '';
  let reasoning = '';
  let figures = null;  // the last chunk: usage and the engine's stats
  let note = null;  // why the answer ended early
  try {
    for await (const chunk of api.chatStream(requestBody(turns), controller.signal)) {
      const delta = chunk.choices[0]?.delta ?? {};
      content += delta.content ?? '';
      reasoning += delta.reasoning_content ?? '';
      answer.update(content, reasoning);
      if (chunk.nanoserve) figures = chunk;
    }
  } catch (error) {
    note = controller.signal.aborted ? 'Stopped.' : `Error: ${error.message}`;
  }
  answer.flush();  // the whole text is on the page before the line under it
  if (note) answer.showNote(note, !controller.signal.aborted);
  else if (figures) answer.showStats(figures.usage, figures.nanoserve);
  // What was written stays in the history, a stopped answer too; a turn without an answer
  // leaves it, so that the next message does not follow an unanswered one.
  if (content) turns.push({ role: 'assistant', content });
  else turns.pop();
  setRunning(null);
}

function requestBody(turns) {
  const system = $('system').value.trim();
  // An empty field leaves the server's default (JSON.stringify drops what is undefined).
  const number = (id) => ($(id).value === '' ? undefined : Number($(id).value));
  return {
    model,
    messages: system ? [{ role: 'system', content: system }, ...turns] : turns,
    temperature: number('temperature'),
    max_tokens: number('max-tokens'),
  };
}

function setRunning(controller) {
  running = controller;
  $('send').disabled = controller !== null;
  $('stop').disabled = controller === null;
  if (!controller) prompt.focus();
}

// A new message at the end of the conversation; returns its element.
function appendMessage(role) {
  const message = document.createElement('article');
  message.className = `message ${role}`;
  conversation.append(message);
  scrollToEnd();
  return message;
}

function scrollToEnd() {
  conversation.scrollTop = conversation.scrollHeight;
}

// Whether the reader is at the end of the conversation (then it follows the answer as it grows).
function atEnd() {
  return conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < 40;
}

// One answer: its reasoning (folded), its text as Markdown, then a line of figures or a note.
class AnswerView {
  #reasoning = document.createElement('details');
  #reasoningText = document.createElement('div');
  #body = document.createElement('div');
  #footer = document.createElement('p');
  #pending = null;  // [content, reasoning] not drawn yet
  #frame = 0;

  constructor(element) {
    const summary = document.createElement('summary');
    summary.textContent = 'Reasoning';
    this.#reasoning.className = 'reasoning';
    this.#reasoning.hidden = true;
    this.#reasoning.append(summary, this.#reasoningText);
    this.#body.className = 'answer';
    this.#footer.className = 'stats';
    element.append(this.#reasoning, this.#body, this.#footer);
  }

  // Drawn once a frame at most: each draw parses the whole text again.
  update(content, reasoning) {
    this.#pending = [content, reasoning];
    this.#frame ||= requestAnimationFrame(() => this.#draw());
  }

  // Draws what is still to be drawn now: the answer is over.
  flush() {
    if (!this.#frame) return;
    cancelAnimationFrame(this.#frame);
    this.#draw();
  }

  #draw() {
    this.#frame = 0;
    const [content, reasoning] = this.#pending;
    const following = atEnd();
    this.#reasoning.hidden = reasoning === '';
    this.#reasoningText.textContent = reasoning;
    this.#body.replaceChildren(renderBlocks(parseMarkdown(content)));
    if (following) scrollToEnd();
  }

  showStats(usage, stats) {
    const rate = (tokensPerSecond) => `${tokensPerSecond.toFixed(1)} tok/s`;
    this.#footer.textContent = [
      `TTFT ${stats.ttft_ms.toFixed(0)} ms`,
      `prefill ${rate(stats.prefill_tok_s)}`,
      `decode ${rate(stats.decode_tok_s)}`,
      `prompt ${usage.prompt_tokens} tokens (${stats.cached_tokens} cached)`,
      `answer ${usage.completion_tokens} tokens`,
    ].join(' · ');
  }

  showNote(text, isError) {
    this.#footer.textContent = text;
    this.#footer.classList.toggle('error', isError);
  }
}
