import { canSeeConfirmation } from '@agentgw/confirmations';
import { silentLogger, systemClock, type ConfirmationPayload } from '@agentgw/core';
import { describe, expect, it, vi } from 'vitest';
import { EventStreams, parseLastEventId, requiredEventId } from './event-streams.js';
import { drain, viewers } from './event-streams.fixtures.js';

/** An expiry far enough away not to matter in a test. */
const later = () => new Date(Date.now() + 3_600_000);

const payload = (
  parties: Pick<ConfirmationPayload, 'userId' | 'endUserId' | 'tenantId'>,
  id: string,
): ConfirmationPayload => ({
  id,
  tool: { name: 't', arguments: {} },
  risk: { level: 'low' },
  providerId: 'p',
  agentId: 'a',
  timestamp: new Date().toISOString(),
  expiresAt: new Date().toISOString(),
  ...parties,
});

describe('EventStreams', () => {
  it('delivers each event to exactly the viewers the visibility rule lets see it', async () => {
    const streams = new EventStreams({ heartbeatMs: 60_000, clock: systemClock, logger: silentLogger() });
    const open = Object.entries(viewers).map(([name, viewer]) => ({
      name,
      viewer,
      stream: streams.open(viewer, new AbortController().signal, later()).stream,
    }));
    const cases = [
      { userId: 'bob', endUserId: 'alice', tenantId: 'acme' },
      { userId: 'alice', endUserId: 'alice', tenantId: null },
      { userId: null, endUserId: 'carol', tenantId: 'globex' },
      { userId: 'someone', endUserId: null, tenantId: 'acme' },
      { userId: null, endUserId: null, tenantId: null },
    ];
    cases.forEach((parties, i) => {
      streams.deliverRequired(payload(parties, `c${i}`));
      streams.deliverResolved({
        id: `c${i}`,
        status: 'confirmed',
        confirmedBy: 'x',
        timestamp: new Date().toISOString(),
        ...parties,
      });
    });
    for (const { name, viewer, stream } of open) {
      const text = await drain(stream);
      cases.forEach((parties, i) => {
        const visible = canSeeConfirmation(viewer, parties);
        const required = text.includes(`"id":"c${i}","tool"`);
        const resolved = new RegExp(`event: CONFIRMATION_RESOLVED\\nid: [^\\n]+\\ndata: \\{"id":"c${i}"`).test(text);
        expect({ name, case: i, required, resolved }).toEqual({ name, case: i, required: visible, resolved: visible });
      });
    }
    streams.stop();
  });

  it('sends CONFIRMATION_RESOLVED as { id, confirmed, status, timestamp }, status as stored (a timeout is rejected)', async () => {
    const streams = new EventStreams({ heartbeatMs: 60_000, clock: systemClock, logger: silentLogger() });
    const { stream } = streams.open(viewers.admin, new AbortController().signal, later());
    const parties = { userId: 'alice', endUserId: null, tenantId: null, timestamp: '2026-01-01T00:00:00.000Z' };
    streams.deliverResolved({ id: 'ok', status: 'confirmed', confirmedBy: 'alice', ...parties });
    streams.deliverResolved({ id: 'no', status: 'rejected', reason: 'not today', ...parties });
    streams.deliverResolved({ id: 'late', status: 'expired', reason: 'timeout', ...parties });
    streams.deliverResolved({ id: 'lost', status: 'expired', reason: 'unannounced', ...parties });
    const data = [...(await drain(stream)).matchAll(/event: CONFIRMATION_RESOLVED\nid: [^\n]+\ndata: (.+)\n/g)].map(
      (m) => JSON.parse(m[1]!) as unknown,
    );
    const at = parties.timestamp;
    expect(data).toEqual([
      { id: 'ok', confirmed: true, status: 'confirmed', timestamp: at },
      { id: 'no', confirmed: false, status: 'rejected', timestamp: at },
      { id: 'late', confirmed: false, status: 'rejected', timestamp: at },
      { id: 'lost', confirmed: false, status: 'expired', timestamp: at },
    ]);
    streams.stop();
  });

  it('cuts off a client that does not read, and forgets streams whose request ended', async () => {
    const streams = new EventStreams({
      heartbeatMs: 60_000,
      clock: systemClock,
      logger: silentLogger(),
      maxBufferedBytes: 4_096,
    });
    const stalled = streams.open(viewers.alice, new AbortController().signal, later());
    const leaving = new AbortController();
    streams.open(viewers.bob, leaving.signal, later());
    expect(streams.size).toBe(2);
    leaving.abort();
    expect(streams.size).toBe(1);
    const big = { userId: 'alice', endUserId: 'alice', tenantId: null };
    for (let i = 0; i < 100; i++)
      streams.deliverRequired({ ...payload(big, `c${i}`), tool: { name: 't', arguments: { pad: 'x'.repeat(500) } } });
    expect(streams.size).toBe(0);
    await expect(stalled.stream.getReader().read()).rejects.toThrow(/too slow/);
    streams.stop();
  });

  it("ends a user's streams on closeUser (others stay), and a stream when its token expires", async () => {
    const streams = new EventStreams({ heartbeatMs: 60_000, clock: systemClock, logger: silentLogger() });
    const alice = [
      streams.open(viewers.alice, new AbortController().signal, later()),
      streams.open(viewers.alice, new AbortController().signal, later()),
    ];
    const bob = streams.open(viewers.bob, new AbortController().signal, later());
    streams.closeUser('alice');
    expect(streams.size).toBe(1);
    streams.deliverRequired(payload({ userId: 'alice', endUserId: 'alice', tenantId: 'acme' }, 'after'));
    for (const { stream } of alice) {
      const text = await drain(stream);
      expect(text).toContain('event: connected');
      expect(text).not.toContain('after');
    }
    // A fake clock: the stream must still be open just before its expiry and end at it.
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    try {
      const short = streams.open(viewers.carol, new AbortController().signal, new Date(Date.now() + 150));
      expect(streams.size).toBe(2);
      const reader = short.stream.getReader();
      expect((await reader.read()).done).toBe(false);
      let ended = false;
      const end = reader.read().then((r) => (ended = r.done));
      await vi.advanceTimersByTimeAsync(149);
      expect([ended, streams.size]).toEqual([false, 2]);
      await vi.advanceTimersByTimeAsync(1);
      await end;
      expect(ended).toBe(true);
    } finally {
      vi.useRealTimers();
    }
    expect(streams.size).toBe(1);
    await bob.stream.cancel();
    streams.stop();
  });

  it('reads back the time and confirmation of an event id, and nothing from junk', () => {
    const p = payload({ userId: null, endUserId: 'alice', tenantId: null }, '3f1c2a4e-0000-4000-8000-000000000001');
    expect(parseLastEventId(requiredEventId(p))).toEqual({
      at: new Date(Date.parse(p.timestamp)),
      confirmationId: p.id,
    });
    expect(parseLastEventId('1767225600000-42')).toEqual({ at: new Date(1767225600000), confirmationId: null });
    for (const junk of [undefined, '', 'abc', '12-', '1e9-1', `${'9'.repeat(20)}-1`, '1.x y', "1.'; drop"])
      expect(parseLastEventId(junk)).toBeNull();
  });
});
