import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { MemoryEventBus, silentLogger, systemClock } from '@agentgw/core';
import type { ServerStreamOutcome, UpstreamSession } from '@agentgw/mcp-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemorySessionStore } from '../memory-session-store.js';
import {
  announcingUpstreams,
  followUpstreamStreams,
  MAX_FOLLOW_FAILURES,
  UPSTREAM_SYNC_MS,
  type UpstreamStreamDeps,
} from './upstream-server-streams.js';

const principal = { userId: 'u1', agentId: null, endUserId: 'u1', apiKey: null } as Principal;
const provider = { id: 'p1', name: 'one' } as ProviderRecord;
const upstream: UpstreamSession = { sessionId: 'up-1', protocolVersion: '2025-11-25' };

/**
 * Client session `s1`'s server stream following its upstream sessions: each `listen` answers the
 * next of `outcomes` (then stays open until stopped); `recordUpstream` records the upstream
 * session the way the forwarding does, through `announcingUpstreams` on a bus.
 */
async function followerUnderTest(outcomes: ServerStreamOutcome[]) {
  const bus = new MemoryEventBus();
  const store = new MemorySessionStore(systemClock);
  await store.create('s1', 'user:u1');
  const sessions = announcingUpstreams(store, bus);
  const listens: string[] = [];
  const listen = (_t: unknown, session: UpstreamSession, _n: unknown, signal: AbortSignal) => {
    listens.push(session.sessionId!);
    const next = outcomes.shift();
    if (next !== undefined) return Promise.resolve(next);
    return new Promise<ServerStreamOutcome>((resolve) =>
      signal.addEventListener('abort', () => resolve('ended'), { once: true }),
    );
  };
  const deps: UpstreamStreamDeps = {
    client: { listen },
    catalog: { providers: { get: async (id: string) => (id === provider.id ? provider : null) } as never },
    sessions: store,
    relay: { relay: () => undefined, targetFor: async () => ({ endpoint: 'http://127.0.0.1:9/mcp', headers: {} }) },
    bus,
    logger: silentLogger(),
  };
  return {
    listens,
    recordUpstream: () => sessions.setUpstream('s1', provider.id, upstream),
    follow: () =>
      followUpstreamStreams(deps, { sid: 's1', principal, capabilities: {}, headers: new Headers(), send: () => {} }),
  };
}

describe("a client stream following its session's upstream streams", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('follows an upstream session at once when it is announced, before the next periodic read', async () => {
    const { listens, recordUpstream, follow } = await followerUnderTest([]);
    const stop = follow();
    await vi.advanceTimersByTimeAsync(0);
    expect(listens).toEqual([]);
    await recordUpstream();
    await vi.advanceTimersByTimeAsync(0);
    expect(listens).toEqual(['up-1']);
    stop();
  });

  it('tries a stream that failed to open again at the next reads, and stops after MAX_FOLLOW_FAILURES in a row', async () => {
    const { listens, recordUpstream, follow } = await followerUnderTest(
      Array<ServerStreamOutcome>(MAX_FOLLOW_FAILURES).fill('failed'),
    );
    await recordUpstream();
    const stop = follow();
    await vi.advanceTimersByTimeAsync(0);
    expect(listens).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(UPSTREAM_SYNC_MS * (MAX_FOLLOW_FAILURES + 3));
    expect(listens).toHaveLength(MAX_FOLLOW_FAILURES);
    stop();
  });

  it.each([
    // The second opening stays open: no further one while it does.
    ['holds a stream that opens after a failure (a 409 while another replica still held it)', 'failed', 2],
    ['does not ask an upstream without a server stream again', 'unsupported', 1],
  ] as const)('%s', async (_name, first, opened) => {
    const { listens, recordUpstream, follow } = await followerUnderTest([first]);
    await recordUpstream();
    const stop = follow();
    await vi.advanceTimersByTimeAsync(UPSTREAM_SYNC_MS * 5);
    expect(listens).toEqual(Array(opened).fill('up-1'));
    stop();
  });
});
