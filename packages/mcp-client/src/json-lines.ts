/**
 * Parses a body of newline-delimited JSON texts incrementally: each text is yielded (parsed) as
 * soon as the newline that completes it arrives, the last one at the end. Some 2026-07-28 servers
 * answer `application/json` this way (a progress notification, then the response; a
 * `subscriptions/listen` that stays open), where a reader waiting for the whole body would see one
 * unparsable text or nothing at all. A text spread over several lines (pretty-printed JSON) is
 * joined until it parses; pending text longer than `maxTextChars` throws, so an endless or
 * unparsable text cannot grow without bound.
 */
export async function* parseJsonLines(
  chunks: AsyncIterable<Uint8Array | string>,
  maxTextChars = Infinity,
): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  const joiner = new JsonLineJoiner();
  let buffer = '';
  for await (const chunk of chunks) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf('\n');
    while (newline !== -1) {
      const parsed = joiner.take(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      if (parsed !== undefined) yield parsed;
      newline = buffer.indexOf('\n');
    }
    if (buffer.length + joiner.pendingChars > maxTextChars)
      throw new Error(`a JSON text exceeds ${maxTextChars} characters`);
  }
  const last = joiner.take(buffer + decoder.decode());
  if (last !== undefined) yield last;
}

/** The JSON texts of a whole buffered body that is not one JSON value (newline-delimited); what never parses is left out. */
export function jsonLinesOf(text: string): unknown[] {
  const joiner = new JsonLineJoiner();
  return text.split('\n').flatMap((line) => {
    const parsed = joiner.take(line);
    return parsed === undefined ? [] : [parsed];
  });
}

/** Joins lines until they form one JSON text: the parsed value when they do, else undefined (kept pending). */
class JsonLineJoiner {
  private pending = '';

  get pendingChars(): number {
    return this.pending.length;
  }

  take(line: string): unknown {
    const text = this.pending === '' ? line.trim() : `${this.pending}\n${line}`;
    if (text === '') return undefined;
    try {
      const parsed = JSON.parse(text) as unknown;
      this.pending = '';
      return parsed;
    } catch {
      this.pending = text;
      return undefined;
    }
  }
}
