import { describe, expect, it } from 'vitest';
import { parseSse } from './sse.js';

async function* chunks(...parts: string[]) {
  for (const part of parts) yield new TextEncoder().encode(part);
}

const collect = async (source: AsyncIterable<Uint8Array>, cap?: number) => {
  const events = [];
  for await (const event of parseSse(source, cap)) events.push(event);
  return events;
};

describe('parseSse', () => {
  it('yields events split across chunks, with CRLF, comments, names, ids and multi-line data', async () => {
    const events = await collect(
      chunks(': hello\r\n', 'event: message\r\nid: 7\r', '\ndata: {"a":\r\ndata: 1}\r\n\r\n', 'data: last\n\n'),
    );
    expect(events).toEqual([
      { event: 'message', data: '{"a":\n1}', id: '7', retry: null },
      { event: 'message', data: 'last', id: '7', retry: null },
    ]);
  });

  it('yields a priming event (an id and empty data, a retry) so a reader knows where to resume; a bad retry is ignored', async () => {
    const events = await collect(
      chunks('id: p-1\ndata:\n\n', 'retry: 250\n\n', 'retry: soon\nid: p-2\n\n', 'retry: x\n\n'),
    );
    expect(events).toEqual([
      { event: 'message', data: '', id: 'p-1', retry: null },
      { event: 'message', data: '', id: 'p-1', retry: 250 },
      { event: 'message', data: '', id: 'p-2', retry: null },
    ]);
  });

  it('reads a message event as MCP servers frame it (id, event, one JSON data line)', async () => {
    const [event] = await collect(chunks('id: 1\nevent: message\ndata: {"jsonrpc":"2.0","method":"x"}\n\n'));
    expect(JSON.parse(event!.data)).toEqual({ jsonrpc: '2.0', method: 'x' });
  });

  it('refuses an event growing past the cap instead of buffering it', async () => {
    const big = 'x'.repeat(1000);
    await expect(collect(chunks(`data: ${big}\n`, `data: ${big}\n`), 1500)).rejects.toThrow(/size cap/);
  });
});
