/** One parsed Server-Sent Event. */
export interface SseEvent {
  event: string;
  id: string | null;
  data: unknown;
}

/**
 * Reads an SSE response into events as they arrive: `next()` waits for the next one (or fails
 * after `timeoutMs`), `close()` drops the connection. For tests and the benchmark.
 */
export class SseReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private readonly queued: SseEvent[] = [];
  private ended = false;
  /** A read still in flight after a timeout is kept, so its chunk is not lost. */
  private reading: ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> | undefined;

  constructor(response: Response) {
    if (!response.body) throw new Error('response has no body');
    this.reader = response.body.getReader();
  }

  /** The next event; null once the server ended the stream. */
  async next(timeoutMs = 5_000): Promise<SseEvent | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.queued.length === 0) {
      if (this.ended) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no SSE event in time');
      let timer: NodeJS.Timeout | undefined;
      this.reading ??= this.reader.read();
      const chunk = await Promise.race([
        this.reading,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk === 'timeout') throw new Error('no SSE event in time');
      this.reading = undefined;
      if (chunk.done) this.ended = true;
      else this.parse(this.decoder.decode(chunk.value, { stream: true }));
    }
    return this.queued.shift()!;
  }

  /** The next event named `name`, skipping others (e.g. heartbeats). */
  async nextOf(name: string, timeoutMs = 5_000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      if (event === null) throw new Error(`stream ended before ${name}`);
      if (event.event === name) return event;
    }
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }

  private parse(text: string): void {
    this.buffer += text;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = { event: 'message', id: null, data: null };
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event.event = value;
        else if (field === 'id') event.id = value;
        else if (field === 'data') data.push(value);
      }
      event.data = data.length > 0 ? JSON.parse(data.join('\n')) : null;
      this.queued.push(event);
    }
  }
}
