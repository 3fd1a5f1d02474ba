// Server-sent events as a stream's text arrives, in pieces cut anywhere: push() each piece,
// get back the data of every event it completed. Events end with a blank line ("\n\n", as the
// server writes them); their `data:` lines are joined with newlines.
export class SseReader {
  #pending = '';

  push(text) {
    this.#pending += text;
    const events = [];
    for (let end; (end = this.#pending.indexOf('\n\n')) >= 0;) {
      const lines = this.#pending.slice(0, end).split('\n');
      this.#pending = this.#pending.slice(end + 2);
      const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(5).replace(/^ /, ''));
      if (data.length > 0) events.push(data.join('\n'));
    }
    return events;
  }
}
