import { MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';
import { describe, expect, it } from 'vitest';
import { resultForClient, SERVER_INFO } from './revision-shapes.js';

describe('resultForClient', () => {
  it('gives a 2026-07-28 list its result type, cache fields and the gateway in _meta, tools without execution', () => {
    const plain = { name: 'plain', inputSchema: { type: 'object' } };
    const result = {
      tools: [plain, { name: 'tasked', execution: { taskSupport: 'optional' } }],
      _meta: { upstream: 1 },
    };
    expect(resultForClient('tools/list', result, MODERN_PROTOCOL_VERSION)).toEqual({
      tools: [plain, { name: 'tasked' }],
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { upstream: 1, 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
    expect(result.tools[1]).toHaveProperty('execution');
  });

  it('keeps what a 2026-07-28 upstream already said, and adds no cache fields to a call result', () => {
    const shaped = resultForClient('tools/call', { content: [], resultType: 'incomplete' }, MODERN_PROTOCOL_VERSION);
    expect(shaped).toEqual({
      content: [],
      resultType: 'incomplete',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
  });

  it("makes cache hints right for a shared gateway: private always, never longer than the upstream's TTL, none on an interim result", () => {
    expect(
      resultForClient('resources/read', { contents: [], ttlMs: 5, cacheScope: 'public' }, MODERN_PROTOCOL_VERSION),
    ).toMatchObject({ ttlMs: 5, cacheScope: 'private' });
    for (const ttlMs of [-1, 1.5, '60000', undefined])
      expect(resultForClient('tools/list', { tools: [], ttlMs }, MODERN_PROTOCOL_VERSION)).toMatchObject({
        ttlMs: 0,
        cacheScope: 'private',
      });
    const interim = resultForClient(
      'resources/read',
      { resultType: 'input_required', inputRequests: {}, requestState: 'opaque' },
      MODERN_PROTOCOL_VERSION,
    );
    expect(interim).toEqual({
      resultType: 'input_required',
      inputRequests: {},
      requestState: 'opaque',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
  });

  it('removes the 2026-07-28 fields for a session revision and passes anything else unchanged', () => {
    expect(
      resultForClient(
        'tools/list',
        { tools: [], resultType: 'complete', ttlMs: 0, cacheScope: 'private' },
        '2025-11-25',
      ),
    ).toEqual({ tools: [] });
    const untouched = { content: [{ type: 'text', text: 'hi' }] };
    expect(resultForClient('tools/call', untouched, '2025-06-18')).toEqual(untouched);
  });
});
