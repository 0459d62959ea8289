/** One parsed Server-Sent Event. */
export interface SseEvent {
  event: string;
  id: string | null;
  data: unknown;
}

/**
 * Reads an SSE response into events as they arrive, for tests that watch a stream from outside
 * (any package): `nextOf(name)` waits for the next event of that name, skipping others.
 */
export class SseEventReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private readonly queued: SseEvent[] = [];
  private ended = false;
  /** A read still pending after a timeout is kept so its chunk is not lost. */
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

  /** The next event named `name` (and matching `where`, when given), skipping the rest. */
  async nextOf(name: string, timeoutMs = 5_000, where: (data: unknown) => boolean = () => true): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      if (event === null) throw new Error(`stream ended before ${name}`);
      if (event.event === name && where(event.data)) return event;
    }
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }

  private parse(text: string): void {
    this.buffer += text.replace(/\r\n/g, '\n');
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = 'message';
      let id: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'id') id = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length === 0 && event === 'message') continue;
      const raw = data.join('\n');
      let parsed: unknown = raw;
      try {
        parsed = raw.length > 0 ? JSON.parse(raw) : raw;
      } catch {
        // not JSON: keep the text
      }
      this.queued.push({ event, id, data: parsed });
    }
  }
}
