// The page's calls to the server: the OpenAI routes every client uses, with the API key of a
// server started with --api-key. The key is kept in localStorage; when the server answers 401
// the page asks for it (askForKey) once for every call refused meanwhile, then retries.
import { SseReader } from './sse.mjs';

const KEY_ITEM = 'nanoserve.apiKey';

export class Api {
  #askForKey;  // (refused: whether a key was sent and refused) => Promise<string>; rejects when dismissed
  #asking = null;  // the question being asked

  constructor(askForKey) {
    this.#askForKey = askForKey;
  }

  async fetch(path, init = {}) {
    for (;;) {
      const key = localStorage.getItem(KEY_ITEM);
      const headers = { ...init.headers, ...(key ? { Authorization: `Bearer ${key}` } : {}) };
      const response = await fetch(path, { ...init, headers });
      if (response.status !== 401) return response;
      // Another call may have got a new key since this one was sent: try that one first.
      if (localStorage.getItem(KEY_ITEM) === key) await this.#newKey(key !== null);
    }
  }

  #newKey(refused) {
    this.#asking ??= this.#askForKey(refused)
      .then((key) => localStorage.setItem(KEY_ITEM, key))
      .finally(() => { this.#asking = null; });
    return this.#asking;
  }

  // The id of the model the server serves.
  async modelName() {
    const response = await this.fetch('/v1/models');
    if (!response.ok) throw new Error(await errorMessage(response));
    return (await response.json()).data[0].id;
  }

  // Each chunk of a streamed chat completion, parsed. `signal` aborts the request: the server
  // then cancels the generation.
  async *chatStream(body, signal) {
    const response = await this.fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
      signal,
    });
    if (!response.ok) throw new Error(await errorMessage(response));
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const events = new SseReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error('the answer ended before it was complete');
      for (const data of events.push(value)) {
        if (data === '[DONE]') return;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        yield chunk;
      }
    }
  }
}

// What the server's error body says (every API error is {error: {message}}), or the status.
async function errorMessage(response) {
  const text = await response.text();
  try {
    return JSON.parse(text).error.message;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}
