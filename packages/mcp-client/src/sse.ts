/**
 * One Server-Sent Event: its `event` name (default `message`), joined `data` lines, the last
 * event id so far (it carries over events, as the HTML grammar says) and the `retry` it set.
 */
export interface SseEvent {
  event: string;
  data: string;
  id: string | null;
  /** The reconnection delay (ms) this event set, or null. */
  retry: number | null;
}

/**
 * Parses a text/event-stream incrementally: events are yielded as soon as their blank line
 * arrives, so progress notifications pass through while a call is still running. Handles
 * CRLF/CR/LF line ends, comments and multi-line data, per the HTML SSE grammar. An event longer
 * than `maxEventChars` throws, so a long-lived stream cannot grow one event without bound.
 * An event with an `id` or `retry` but no data (an MCP priming event, SEP-1699) is yielded too,
 * with empty data, so a reader learns where to resume from.
 */
export async function* parseSse(
  chunks: AsyncIterable<Uint8Array | string>,
  maxEventChars = Infinity,
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let data: string[] = [];
  let id: string | null = null;
  let sawData = false;
  let sawCursor = false;
  let retry: number | null = null;
  let dataChars = 0;

  const takeLine = (line: string): SseEvent | null => {
    if (line === '') {
      const done = sawData || sawCursor ? { event, data: data.join('\n'), id, retry } : null;
      event = 'message';
      data = [];
      sawData = false;
      sawCursor = false;
      retry = null;
      dataChars = 0;
      return done;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      data.push(value);
      dataChars += value.length;
      sawData = true;
    } else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) {
      id = value;
      sawCursor = true;
    } else if (field === 'retry' && /^\d+$/.test(value)) {
      retry = Number(value);
      sawCursor = true;
    }
    return null;
  };

  for await (const chunk of chunks) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      const match = /\r\n|\r|\n/g;
      match.lastIndex = start;
      const found = match.exec(buffer);
      // A lone CR at the very end may be the first half of CRLF: wait for more.
      if (!found || (found[0] === '\r' && found.index === buffer.length - 1)) break;
      const done = takeLine(buffer.slice(start, found.index));
      start = found.index + found[0].length;
      if (done) yield done;
    }
    buffer = buffer.slice(start);
    // One event (its pending line plus its data so far) may not grow past the cap.
    if (buffer.length + dataChars > maxEventChars) throw new Error('SSE event exceeds the size cap');
  }
  buffer += decoder.decode();
  if (buffer !== '') {
    const done = takeLine(buffer);
    if (done) yield done;
  }
  const last = takeLine('');
  if (last) yield last;
}
