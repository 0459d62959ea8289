import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

describe('SseParser', () => {
  it('parses named events with JSON data, across arbitrary chunk boundaries', () => {
    const text =
      'event: connected\ndata: {"userId":"u1"}\n\n: heartbeat comment\n\nevent: CONFIRMATION_REQUIRED\r\ndata: {"id":"c1",\r\ndata: "x":1}\r\n\r\n';
    for (const size of [1, 3, 7, text.length]) {
      const parser = new SseParser();
      const events = [];
      for (let i = 0; i < text.length; i += size) events.push(...parser.push(text.slice(i, i + size)));
      expect(events).toEqual([
        { event: 'connected', data: '{"userId":"u1"}' },
        { event: 'CONFIRMATION_REQUIRED', data: '{"id":"c1",\n"x":1}' },
      ]);
    }
  });

  it('defaults the event name to message, keeps the last id and waits for the blank line', () => {
    const parser = new SseParser();
    expect(parser.push('id: 7\ndata:plain\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ event: 'message', data: 'plain', id: '7' }]);
    expect(parser.push('event: heartbeat\n\n')).toEqual([]);
  });
});
