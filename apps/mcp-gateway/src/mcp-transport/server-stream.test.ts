import type { Principal } from '@agentgw/auth';
import { createLogger, MemoryEventBus, systemClock } from '@agentgw/core';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { SessionClaims } from '../session-ids.js';
import { MAX_SERVER_STREAMS_PER_CALLER, ServerStreamCounts, serverStream } from './server-stream.js';
import { MemoryResumptionStore } from '../stream-resumption/resumption-store.js';

const claims: SessionClaims = {
  sid: 's1',
  protocolVersion: '2025-06-18',
  scope: 'unified',
  userId: 'u1',
  agentId: null,
  endUserId: 'u1',
  iat: 0,
};
/** Nothing upstream: the session has opened no upstream session, so there is no upstream stream to follow. */
const NO_UPSTREAM_STREAMS = {
  client: { listen: async () => 'unsupported' as const },
  catalog: { providers: {} as never },
  relay: { relay: () => undefined, targetFor: () => Promise.reject(new Error('no upstream streams here')) },
  logger: createLogger({ level: 'silent' }),
};
const principal = { userId: 'u1', agentId: null, endUserId: 'u1', apiKey: null } as Principal;

function startServerStreamUnderTest() {
  const bus = new MemoryEventBus();
  const streams = new Set<() => void>();
  const deps = {
    bus,
    clock: systemClock,
    streams,
    codec: { open: (id: string) => (id === 'good' ? claims : null) },
    sessions: { get: async () => ({}) },
    resumption: new MemoryResumptionStore(systemClock),
    ...NO_UPSTREAM_STREAMS,
  };
  const app = new Hono();
  app.use(async (c, next) => {
    c.set('principal', principal);
    await next();
  });
  const counts = new ServerStreamCounts();
  app.get('/', (c) => serverStream(deps, counts, c));
  const get = async (headers: Record<string, string> = {}) =>
    app.request('/', { headers: { accept: 'text/event-stream', 'mcp-session-id': 'good', ...headers } });
  return { bus, streams, get };
}

/** Reads the stream until it ends, or for `ms` at most. */
async function readFor(res: Response, ms: number): Promise<{ text: string; ended: boolean }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    const next = await Promise.race([
      reader.read(),
      new Promise<null>((r) => setTimeout(() => r(null), Math.max(left, 0))),
    ]);
    if (next === null) {
      void reader.cancel();
      return { text, ended: false };
    }
    if (next.done) return { text, ended: true };
    text += decoder.decode(next.value, { stream: true });
  }
}

describe('serverStream (GET)', () => {
  it('refuses 2026-07-28 (405), a client not taking SSE (406), and a session it cannot find (404)', async () => {
    const { get } = startServerStreamUnderTest();
    const modern = await get({ 'mcp-protocol-version': '2026-07-28' });
    expect([modern.status, modern.headers.get('allow')]).toEqual([405, 'POST']);
    expect((await get({ accept: 'application/json' })).status).toBe(406);
    expect((await get({ 'mcp-session-id': 'forged' })).status).toBe(404);
  });

  it("carries list_changed on provider and rule changes, and ends on its user's change, letting go of everything", async () => {
    const { bus, streams, get } = startServerStreamUnderTest();
    const res = await get();
    expect([res.status, res.headers.get('content-type'), res.headers.get('mcp-session-id')]).toEqual([
      200,
      'text/event-stream',
      'good',
    ]);
    expect(streams.size).toBe(1);
    await bus.publish('providers.changed', { providerId: 'p1' });
    await bus.publish('rules.changed', { subjectType: null, subjectId: null });
    await bus.publish('user.changed', { userId: 'someone-else' });
    await bus.publish('user.changed', { userId: 'u1' });
    const { text, ended } = await readFor(res, 2_000);
    expect(ended).toBe(true);
    expect(text.startsWith(': stream open\n\n')).toBe(true);
    const methods = [...text.matchAll(/"method":"([^"]+)"/g)].map((m) => m[1]);
    expect(methods).toEqual([
      'notifications/tools/list_changed',
      'notifications/resources/list_changed',
      'notifications/prompts/list_changed',
      'notifications/tools/list_changed',
    ]);
    expect(streams.size).toBe(0);
    await bus.publish('providers.changed', { providerId: 'p1' });
  });

  it(`holds at most ${MAX_SERVER_STREAMS_PER_CALLER} streams per caller (429 past it); one ending (shutdown) frees a place`, async () => {
    const { streams, get } = startServerStreamUnderTest();
    const open = await Promise.all(Array.from({ length: MAX_SERVER_STREAMS_PER_CALLER }, () => get()));
    expect(open.every((res) => res.status === 200)).toBe(true);
    const refused = await get();
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '5']);
    [...streams][0]!();
    expect(streams.size).toBe(MAX_SERVER_STREAMS_PER_CALLER - 1);
    expect((await get()).status).toBe(200);
    for (const end of [...streams]) end();
    expect(streams.size).toBe(0);
  });

  it('ends when the client cancels the body', async () => {
    const { streams, get } = startServerStreamUnderTest();
    const res = await get();
    await res.body!.cancel();
    expect(streams.size).toBe(0);
  });
});
