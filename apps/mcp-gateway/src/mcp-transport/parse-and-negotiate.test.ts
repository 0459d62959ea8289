import { JSON_RPC } from '@agentgw/mcp-client';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_MESSAGES, negotiateRevision, parsePost, sessionRevision, type ParsedPost } from './parse-and-negotiate.js';
import type { Reply } from './replies.js';

const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN };
const call = (id: number, meta?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't', ...(meta ? { _meta: meta } : {}) } });

const parsed = (body: unknown, headerVersion: string | null = null): ParsedPost => {
  const result = parsePost(JSON.stringify(body), headerVersion);
  if ('status' in result) throw new Error(`refused: ${JSON.stringify(result.body)}`);
  return result;
};
const refused = (result: ParsedPost | Reply) => {
  if (!('status' in result)) throw new Error('parsed');
  const { error, id } = result.body as { id: unknown; error: { code: number; message: string } };
  return { status: result.status, id, code: error.code, message: error.message };
};

describe('parsePost', () => {
  it('refuses a body that is not JSON, an unknown MCP-Protocol-Version, and a batch too long or empty', () => {
    expect(refused(parsePost('{nope', null))).toMatchObject({ status: 400, code: JSON_RPC.PARSE_ERROR });
    expect(refused(parsePost('{}', '1999-01-01'))).toMatchObject({ status: 400, code: JSON_RPC.INVALID_REQUEST, message: expect.stringContaining('unsupported MCP-Protocol-Version') });
    const long = Array.from({ length: MAX_BATCH_MESSAGES + 1 }, (_, i) => call(i));
    expect(refused(parsePost(JSON.stringify(long), null))).toMatchObject({ status: 400, message: `A batch may hold at most ${MAX_BATCH_MESSAGES} messages` });
    expect(refused(parsePost('[]', null))).toMatchObject({ status: 400, message: 'An empty batch is invalid' });
  });

  it('answers a single invalid message with its own error and id; keeps invalid ones inside a batch', () => {
    expect(refused(parsePost(JSON.stringify({ jsonrpc: '1.0', id: 9, method: 'x' }), null))).toEqual({ status: 400, id: 9, code: JSON_RPC.INVALID_REQUEST, message: 'jsonrpc must be "2.0"' });
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
    expect(negotiateRevision(parsed([init]), null, null)).toMatchObject({ kind: 'reply', reply: { status: 400, body: { error: { message: 'initialize cannot be part of a batch' } } } });
  });

  it('serves 2026-07-28 statelessly when the _meta or the header says so, even with a session header', () => {
    expect(negotiateRevision(parsed(call(1, META)), null, 'sid')).toEqual({ kind: 'stateless', protocolVersion: MODERN });
    expect(negotiateRevision(parsed(call(1)), MODERN, null)).toEqual({ kind: 'stateless', protocolVersion: MODERN });
    expect(negotiateRevision(parsed(call(1, META)), MODERN, null)).toEqual({ kind: 'stateless', protocolVersion: MODERN });
  });

  it('refuses a modern request naming an unknown revision, disagreeing with its header, or batched', () => {
    const unknown = negotiateRevision(parsed(call(4, { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' })), null, null);
    expect(unknown).toMatchObject({ kind: 'reply', reply: { status: 400, body: { id: 4, error: { code: JSON_RPC.UNSUPPORTED_PROTOCOL_VERSION, data: { requested: '2099-01-01' } } } } });
    expect(negotiateRevision(parsed(call(1, META)), '2025-11-25', null)).toMatchObject({ reply: { body: { error: { message: 'MCP-Protocol-Version does not match the request _meta' } } } });
    expect(negotiateRevision(parsed([call(1, META)]), null, null)).toMatchObject({ reply: { body: { error: { message: `Batches are not supported by protocol version ${MODERN}` } } } });
  });

  it('without _meta: the session its header names, else stateless at the header revision or the newest legacy one', () => {
    expect(negotiateRevision(parsed(call(1)), '2025-06-18', 'sid-1')).toEqual({ kind: 'session', id: 'sid-1' });
    expect(negotiateRevision(parsed(call(1)), '2025-06-18', null)).toEqual({ kind: 'stateless', protocolVersion: '2025-06-18' });
    expect(negotiateRevision(parsed(call(1)), null, null)).toEqual({ kind: 'stateless', protocolVersion: '2025-11-25' });
  });

  it('takes a sessionless batch only at 2025-03-26', () => {
    expect(negotiateRevision(parsed([call(1)]), '2025-03-26', null)).toEqual({ kind: 'stateless', protocolVersion: '2025-03-26' });
    expect(negotiateRevision(parsed([call(1)]), null, null)).toMatchObject({ kind: 'reply', reply: { status: 400 } });
  });
});

describe('sessionRevision', () => {
  it("accepts the session's revision or the assumed default in the header, and batches only at 2025-03-26", () => {
    expect(sessionRevision(false, '2025-06-18', null)).toBeNull();
    expect(sessionRevision(false, '2025-06-18', '2025-06-18')).toBeNull();
    expect(sessionRevision(false, '2025-06-18', '2025-03-26')).toBeNull();
    expect(sessionRevision(false, '2025-06-18', '2025-11-25')).toMatchObject({ status: 400, body: { error: { message: 'MCP-Protocol-Version does not match the session' } } });
    expect(sessionRevision(true, '2025-03-26', null)).toBeNull();
    expect(sessionRevision(true, '2025-06-18', null)).toMatchObject({ status: 400 });
  });
});
