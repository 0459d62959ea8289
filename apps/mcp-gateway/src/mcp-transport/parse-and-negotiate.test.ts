import { JSON_RPC } from '@agentgw/mcp-client';
import { describe, expect, it } from 'vitest';
import {
  MAX_BATCH_MESSAGES,
  negotiateRevision,
  parsePost,
  sessionRevision,
  type ParsedPost,
} from './parse-and-negotiate.js';
import type { Reply } from './replies.js';

const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
const call = (id: number, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 't', ...(meta ? { _meta: meta } : {}) },
});

const parsed = (body: unknown): ParsedPost => {
  const result = parsePost(JSON.stringify(body));
  if ('status' in result) throw new Error(`refused: ${JSON.stringify(result.body)}`);
  return result;
};
const refused = (result: ParsedPost | Reply) => {
  if (!('status' in result)) throw new Error('parsed');
  const { error, id } = result.body as { id: unknown; error: { code: number; message: string } };
  return { status: result.status, id, code: error.code, message: error.message };
};

describe('parsePost', () => {
  it('refuses a body that is not JSON, and a batch too long or empty', () => {
    expect(refused(parsePost('{nope'))).toMatchObject({ status: 400, code: JSON_RPC.PARSE_ERROR });
    const long = Array.from({ length: MAX_BATCH_MESSAGES + 1 }, (_, i) => call(i));
    expect(refused(parsePost(JSON.stringify(long)))).toMatchObject({
      status: 400,
      message: `A batch may hold at most ${MAX_BATCH_MESSAGES} messages`,
    });
    expect(refused(parsePost('[]'))).toMatchObject({ status: 400, message: 'An empty batch is invalid' });
  });

  it('answers a single invalid message with its own error and id; keeps invalid ones inside a batch', () => {
    expect(refused(parsePost(JSON.stringify({ jsonrpc: '1.0', id: 9, method: 'x' })))).toEqual({
      status: 400,
      id: 9,
      code: JSON_RPC.INVALID_REQUEST,
      message: 'jsonrpc must be "2.0"',
    });
    const batch = parsed([{ jsonrpc: '2.0', id: 1 }, call(2), { jsonrpc: '2.0', method: 'notifications/initialized' }]);
    expect(batch.batch).toBe(true);
    expect(batch.items.map((i) => i.kind)).toEqual(['invalid', 'request', 'notification']);
    expect(batch.first?.message).toMatchObject({ id: 2 });
  });
});

describe('negotiateRevision', () => {
  it('takes initialize alone, never in a batch', () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } };
    expect(negotiateRevision(parsed(init), null, null)).toMatchObject({ kind: 'initialize', request: { id: 1 } });
    expect(negotiateRevision(parsed([init]), null, null)).toMatchObject({
      kind: 'reply',
      reply: { status: 400, body: { error: { message: 'initialize cannot be part of a batch' } } },
    });
  });

  it('serves 2026-07-28 statelessly when the _meta and the header say so, even with a session header', () => {
    expect(negotiateRevision(parsed(call(1, META)), MODERN, 'sid')).toEqual({
      kind: 'stateless',
      protocolVersion: MODERN,
    });
    // A notification has no _meta rules on that wire.
    expect(negotiateRevision(parsed({ jsonrpc: '2.0', method: 'notifications/x' }), MODERN, null)).toEqual({
      kind: 'stateless',
      protocolVersion: MODERN,
    });
  });

  it('refuses a modern request naming an unknown revision, disagreeing with its header, without the header, or batched', () => {
    const unknown = negotiateRevision(
      parsed(call(4, { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' })),
      'v999.0.0',
      null,
    );
    expect(unknown).toEqual({
      kind: 'reply',
      reply: {
        status: 400,
        body: {
          jsonrpc: '2.0',
          id: 4,
          error: {
            code: -32022,
            message: 'Unsupported protocol version: v999.0.0',
            data: {
              supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
              requested: 'v999.0.0',
            },
          },
        },
      },
    });
    // Header and _meta disagreeing is a header mismatch, whichever of them is unknown.
    for (const [header, meta] of [
      [MODERN, 'v999.0.0'],
      ['2025-11-25', MODERN],
    ]) {
      expect(
        negotiateRevision(parsed(call(5, { ...META, 'io.modelcontextprotocol/protocolVersion': meta })), header!, null),
      ).toMatchObject({
        reply: { status: 400, body: { id: 5, error: { code: -32020 } } },
      });
    }
    expect(negotiateRevision(parsed(call(6, META)), null, null)).toMatchObject({
      reply: {
        status: 400,
        body: {
          id: 6,
          error: { code: -32020, message: expect.stringContaining('MCP-Protocol-Version header is required') },
        },
      },
    });
    expect(negotiateRevision(parsed([call(1, META)]), MODERN, null)).toMatchObject({
      reply: { body: { error: { message: `Batches are not supported by protocol version ${MODERN}` } } },
    });
  });

  it('refuses an unknown MCP-Protocol-Version on any wire with -32022 and the request id', () => {
    expect(negotiateRevision(parsed(call(7)), '1999-01-01', null)).toMatchObject({
      reply: { status: 400, body: { id: 7, error: { code: -32022, data: { requested: '1999-01-01' } } } },
    });
  });

  it("requires the request _meta's protocolVersion and clientCapabilities (-32602, 400)", () => {
    const { 'io.modelcontextprotocol/clientCapabilities': _caps, ...noCaps } = META;
    for (const meta of [
      undefined,
      { 'io.modelcontextprotocol/clientCapabilities': {} },
      noCaps,
      { ...META, 'io.modelcontextprotocol/clientCapabilities': [] },
    ]) {
      expect(negotiateRevision(parsed(call(8, meta)), MODERN, null)).toMatchObject({
        reply: { status: 400, body: { id: 8, error: { code: JSON_RPC.INVALID_PARAMS } } },
      });
    }
  });

  it('refuses Mcp-Method or Mcp-Name disagreeing with the body (-32020), decoding a Base64 sentinel and trimming whitespace', () => {
    const headers = (h: Record<string, string>) => (name: string) => h[name] ?? null;
    const negotiate = (h: Record<string, string>) => negotiateRevision(parsed(call(9, META)), MODERN, null, headers(h));
    expect(negotiate({ 'mcp-method': 'tools/call', 'mcp-name': ' t ' })).toEqual({
      kind: 'stateless',
      protocolVersion: MODERN,
    });
    expect(
      negotiate({ 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('t').toString('base64')}?=` }),
    ).toEqual({ kind: 'stateless', protocolVersion: MODERN });
    for (const bad of <Record<string, string>[]>[
      { 'mcp-method': 'TOOLS/CALL' },
      { 'mcp-method': 'tools/list' },
      { 'mcp-name': 'other' },
      { 'mcp-name': `=?base64?${Buffer.from('u').toString('base64')}?=` },
      { 'mcp-name': '=?base64?***?=' },
    ]) {
      expect(negotiate(bad)).toMatchObject({ reply: { status: 400, body: { id: 9, error: { code: -32020 } } } });
    }
  });

  it('answers the methods 2026-07-28 removed with 404 -32601, initialize included', () => {
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']) {
      const request = { jsonrpc: '2.0', id: 10, method, params: { _meta: META } };
      expect(negotiateRevision(parsed(request), MODERN, null)).toMatchObject({
        reply: { status: 404, body: { id: 10, error: { code: JSON_RPC.METHOD_NOT_FOUND } } },
      });
    }
  });

  it('without _meta: the session its header names, else stateless at the header revision or the newest legacy one', () => {
    expect(negotiateRevision(parsed(call(1)), '2025-06-18', 'sid-1')).toEqual({ kind: 'session', id: 'sid-1' });
    expect(negotiateRevision(parsed(call(1)), '2025-06-18', null)).toEqual({
      kind: 'stateless',
      protocolVersion: '2025-06-18',
    });
    expect(negotiateRevision(parsed(call(1)), null, null)).toEqual({
      kind: 'stateless',
      protocolVersion: '2025-11-25',
    });
  });

  it('takes a sessionless batch only at 2025-03-26', () => {
    expect(negotiateRevision(parsed([call(1)]), '2025-03-26', null)).toEqual({
      kind: 'stateless',
      protocolVersion: '2025-03-26',
    });
    expect(negotiateRevision(parsed([call(1)]), null, null)).toMatchObject({ kind: 'reply', reply: { status: 400 } });
  });
});

describe('sessionRevision', () => {
  it("accepts the session's revision or the assumed default in the header, and batches only at 2025-03-26", () => {
    expect(sessionRevision(false, '2025-06-18', null)).toBeNull();
    expect(sessionRevision(false, '2025-06-18', '2025-06-18')).toBeNull();
    expect(sessionRevision(false, '2025-06-18', '2025-03-26')).toBeNull();
    expect(sessionRevision(false, '2025-06-18', '2025-11-25')).toMatchObject({
      status: 400,
      body: { error: { message: 'MCP-Protocol-Version does not match the session' } },
    });
    expect(sessionRevision(true, '2025-03-26', null)).toBeNull();
    expect(sessionRevision(true, '2025-06-18', null)).toMatchObject({ status: 400 });
  });
});
