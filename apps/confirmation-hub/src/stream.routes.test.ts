import { createAuth } from '@agentgw/auth';
import { MemoryEventBus } from '@agentgw/core';
import { serve, type RunningServer } from '@agentgw/service-kit';
import { createUser, SseEventReader, tokenFor, type SseEvent } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubUnderTest, type Caller, type HubFixture } from './hub.fixtures.js';

// Event payloads are whatever JSON the stream sent; tests assert on their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('SSE stream over a real HTTP server', () => {
  let hub: HubFixture;
  let server: RunningServer;
  let base: string;
  const readers: SseEventReader[] = [];

  beforeAll(async () => {
    hub = await startHubUnderTest({ env: { SSE_HEARTBEAT_MS: '300' } });
    server = await serve(hub.host.app, {
      port: 0,
      hostname: '127.0.0.1',
      deps: { close: async () => {} },
      logger: hub.deps.logger,
      handleSignals: false,
      stopServices: (o) => hub.host.stop(o),
    });
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await Promise.all(readers.map((r) => r.close()));
    await server.shutdown();
    await hub.close();
  });

  async function connect(who: Caller, lastEventId?: string): Promise<{ reader: SseEventReader; connected: SseEvent }> {
    const headers: Record<string, string> = { authorization: `Bearer ${who.token}`, accept: 'text/event-stream' };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const res = await fetch(`${base}/api/v1/stream`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = new SseEventReader(res);
    readers.push(reader);
    const connected = (await reader.next())!;
    return { reader, connected };
  }

  it('refuses a request without a user JWT', async () => {
    const res = await fetch(`${base}/api/v1/stream`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: expect.any(String) });
  });

  it('opens with connected, then delivers CONFIRMATION_REQUIRED and CONFIRMATION_RESOLVED to those who may see them only', async () => {
    const { reader: alice, connected } = await connect(hub.alice);
    expect(connected).toMatchObject({
      event: 'connected',
      id: expect.stringMatching(/^\d+-\d+$/),
      data: { userId: hub.alice.id },
    });
    expect(Date.parse((connected.data as Json).timestamp)).not.toBeNaN();
    const { reader: acmeAdmin } = await connect(hub.acmeAdmin);
    const { reader: admin } = await connect(hub.admin);
    const { reader: carol } = await connect(hub.carol);
    const { reader: globexAdmin } = await connect(hub.globexAdmin);

    const { id, outcome } = await hub.hold({ arguments: { repo: 'acme/site', branch: 'main' }, risk: 'critical' });
    for (const reader of [alice, acmeAdmin, admin]) {
      const required = await reader.nextOf('CONFIRMATION_REQUIRED');
      expect(required.id).toBe(`${Date.parse((required.data as Json).timestamp)}.${id}`);
      expect(required.data).toMatchObject({
        id,
        tool: { name: 'delete_repo', arguments: { repo: 'acme/site', branch: 'main' } },
        risk: { level: 'critical' },
        timestamp: expect.any(String),
      });
    }
    const answer = await fetch(`${base}/api/v1/confirmation/${id}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hub.alice.token}` },
    });
    expect(answer.status).toBe(200);
    await outcome;
    for (const reader of [alice, acmeAdmin, admin]) {
      const resolved = await reader.nextOf('CONFIRMATION_RESOLVED');
      expect(resolved.id).toMatch(/^\d+-\d+$/);
      expect(resolved.data).toMatchObject({ id, confirmed: true, timestamp: expect.any(String) });
    }
    // Outsiders saw only heartbeats in the meantime.
    for (const reader of [carol, globexAdmin]) {
      for (let i = 0; i < 2; i++) expect((await reader.next())?.event).toBe('heartbeat');
    }
  });

  it('masks secret-named arguments in CONFIRMATION_REQUIRED and in a Last-Event-ID replay', async () => {
    const { reader } = await connect(hub.alice);
    const { id } = await hub.hold({
      toolName: 'masked_tool',
      arguments: { repo: 'acme/site', clientSecret: 'shh-123', headers: { Authorization: 'Bearer abc' } },
    });
    const live = await reader.nextOf('CONFIRMATION_REQUIRED', 5_000, (d) => (d as Json).id === id);
    const expected = { repo: 'acme/site', clientSecret: '********', headers: { Authorization: '********' } };
    expect((live.data as Json).tool.arguments).toEqual(expected);
    const replay = await connect(hub.alice, `${Date.parse((live.data as Json).timestamp) - 1}-1`);
    const replayed = await replay.reader.nextOf('CONFIRMATION_REQUIRED', 5_000, (d) => (d as Json).id === id);
    expect((replayed.data as Json).tool.arguments).toEqual(expected);
    // Decided, so later replays do not carry it.
    await fetch(`${base}/api/v1/confirmation/${id}/reject`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hub.alice.token}` },
    });
  });

  it('sends a heartbeat every SSE_HEARTBEAT_MS, each with an id', async () => {
    const { reader } = await connect(hub.bob);
    const ids: (string | null)[] = [];
    // Three beats keep coming with nothing else to send; the bound catches a stream that went
    // quiet, not a slow machine (the interval itself is not timed here: a busy CI reads late).
    while (ids.length < 3) ids.push((await reader.nextOf('heartbeat', 20_000)).id);
    expect(new Set(ids).size).toBe(3);
    expect(ids).not.toContain(null);
  });

  it('replays the still-pending confirmations a reconnecting client missed (Last-Event-ID)', async () => {
    const first = await connect(hub.alice);
    const seen = await hub.hold({ toolName: 'seen_tool' });
    const seenEvent = await first.reader.nextOf('CONFIRMATION_REQUIRED');
    expect((seenEvent.data as Json).id).toBe(seen.id);
    await first.reader.close();

    const missed = await hub.hold({ toolName: 'missed_tool' });
    const missedThenDecided = await hub.hold({ toolName: 'decided_tool' });
    await fetch(`${base}/api/v1/confirmation/${missedThenDecided.id}/reject`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hub.alice.token}` },
    });

    const again = await connect(hub.alice, seenEvent.id!);
    expect(again.connected.event).toBe('connected');
    const replayed = await again.reader.nextOf('CONFIRMATION_REQUIRED');
    expect(replayed.data).toMatchObject({ id: missed.id, tool: { name: 'missed_tool' } });
    expect(replayed.id).toBe(`${Date.parse((replayed.data as Json).timestamp)}.${missed.id}`);
    // Nothing else is replayed: the seen one is skipped, the decided one is no longer pending.
    expect((await again.reader.next(1_000))?.event).toBe('heartbeat');

    const carolAgain = await connect(hub.carol, seenEvent.id!);
    expect((await carolAgain.reader.next(1_000))?.event).toBe('heartbeat');
  });

  it('answers stream/pending with the pending payloads the caller may see', async () => {
    const { id } = await hub.hold({ toolName: 'polled_tool' });
    const res = await fetch(`${base}/api/v1/stream/pending`, {
      headers: { authorization: `Bearer ${hub.alice.token}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.data.find((p: Json) => p.id === id)).toMatchObject({
      tool: { name: 'polled_tool', arguments: expect.any(Object) },
      risk: { level: 'high' },
    });
    const other = (await (
      await fetch(`${base}/api/v1/stream/pending`, { headers: { authorization: `Bearer ${hub.globexAdmin.token}` } })
    ).json()) as Json;
    expect(other.data.map((p: Json) => p.id)).not.toContain(id);
  });

  /**
   * Every event until the server ends the stream; throws when it is still open after `hangMs`, a
   * hang bound far past any wait under test (not a speed claim).
   */
  async function untilEnd(reader: SseEventReader, hangMs = 30_000): Promise<SseEvent[]> {
    const seen: SseEvent[] = [];
    const deadline = Date.now() + hangMs;
    for (;;) {
      const event = await reader.next(Math.max(1, deadline - Date.now()));
      if (event === null) return seen;
      seen.push(event);
    }
  }

  /** A fresh tenant admin of acme (sees every acme confirmation), with a login token. */
  async function acmeTenantAdmin(): Promise<Caller> {
    const user = await createUser(hub.deps, {
      email: `revoked-${Date.now()}-${Math.random()}@example.test`,
      roles: ['tenant_admin'],
      tenantId: 'acme',
    });
    return { id: user.id, token: await tokenFor(hub.deps, user) };
  }

  it.each([
    ['demoted', (id: string) => hub.deps.db.updateTable('users').set({ roles: [] }).where('id', '=', id).execute()],
    ['deleted', (id: string) => hub.deps.db.deleteFrom('users').where('id', '=', id).execute()],
  ] as const)(
    'a %s user: their open streams end at user.changed and deliver nothing after it',
    async (_what, change) => {
      const victim = await acmeTenantAdmin();
      const streams = [(await connect(victim)).reader, (await connect(victim)).reader];
      const bystander = (await connect(hub.acmeAdmin)).reader;
      const before = await hub.hold({ toolName: 'before_change' });
      for (const reader of streams)
        expect((await reader.nextOf('CONFIRMATION_REQUIRED')).data).toMatchObject({ id: before.id });

      await change(victim.id);
      await hub.deps.bus.publish('user.changed', { userId: victim.id });
      const after = await hub.hold({ toolName: 'after_change' });
      for (const reader of streams) {
        const rest = await untilEnd(reader);
        expect(rest.map((e) => (e.data as Json).id)).not.toContain(after.id);
      }
      // Others keep their streams and hear it.
      expect(
        (await bystander.nextOf('CONFIRMATION_REQUIRED', 5_000, (d) => (d as Json).id === after.id)).data,
      ).toMatchObject({ tool: { name: 'after_change' } });
      // Reconnecting authenticates again: the deleted user is refused, the demoted one sees no acme call.
      const res = await fetch(`${base}/api/v1/stream/pending`, {
        headers: { authorization: `Bearer ${victim.token}` },
      });
      if (_what === 'deleted') expect(res.status).toBe(401);
      else expect(((await res.json()) as Json).data.map((p: Json) => p.id)).not.toContain(after.id);
    },
  );

  it.each([
    ['bearer', (token: string) => ({ authorization: `Bearer ${token}` })],
    ['console cookie', (token: string) => ({ cookie: `agentgw_session=${token}` })],
  ])('ends a stream when the token that opened it expires (%s)', async (_how, credentials) => {
    const shortLived = await createAuth({
      config: { ...hub.deps.config, JWT_EXPIRES_IN: '2' },
      db: hub.deps.db,
      bus: new MemoryEventBus(),
    });
    try {
      const user = await createUser(hub.deps, {
        email: `short-${Date.now()}-${Math.random()}@example.test`,
        tenantId: 'acme',
      });
      const res = await fetch(`${base}/api/v1/stream`, { headers: credentials(await shortLived.signUserToken(user)) });
      expect(res.status).toBe(200);
      const reader = new SseEventReader(res);
      readers.push(reader);
      expect((await reader.next())?.event).toBe('connected');
      // Nothing else ends it (no user change, the service runs on): the 2 s token's expiry does. That
      // it stays open until then and ends at it is event-streams.test's, on a fake clock.
      await untilEnd(reader);
    } finally {
      await shortLived.close();
    }
  });

  it('ends open streams when the service stops', async () => {
    const { reader } = await connect(hub.bob);
    const stopped = hub.host.stop({ deadlineMs: 1_000 });
    let event: SseEvent | null;
    do event = await reader.next(2_000);
    while (event !== null);
    await stopped;
  });
});
