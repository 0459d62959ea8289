import { createUser, tokenFor } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialExpiry } from './credential-expiry.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { MemorySessionStore } from './memory-session-store.js';

// An open MCP server stream (GET) used to outlive everything that authorised it: a demoted or
// deleted user, a disabled agent, an expired login token kept it open until the client left.

/** Opens a session for the caller (initialize); its id. */
async function initialize(gw: GatewayUnderTest, headers: Record<string, string>): Promise<string> {
  const init = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  expect(init.status).toBe(200);
  return init.headers.get('mcp-session-id')!;
}

type Stream = { sid: string; ended: (withinMs: number) => Promise<boolean>; close: () => void };

async function openStream(gw: GatewayUnderTest, headers: Record<string, string>): Promise<Stream> {
  const sid = await initialize(gw, headers);
  const controller = new AbortController();
  const res = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
    headers: { ...headers, accept: 'text/event-stream', 'mcp-session-id': sid },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toContain('stream open');
  // Resolves true when the server ends the stream (the reader reports done).
  const done = (async () => {
    try {
      for (;;) if ((await reader.read()).done) return true;
    } catch {
      return false;
    }
  })();
  return {
    sid,
    ended: (withinMs) => Promise.race([done, new Promise<boolean>((r) => setTimeout(() => r(false), withinMs))]),
    close: () => controller.abort(),
  };
}

describe('MCP server streams end with the credentials that opened them', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGatewayUnderTest();
  });
  afterAll(() => gw?.close());

  it("ends when the stream's user changes (user.changed), not when another user does", async () => {
    const user = await createUser(gw.deps, { email: `streamer-${Date.now()}@example.com`, roles: ['agent_creator'] });
    const stream = await openStream(gw, { authorization: `Bearer ${await tokenFor(gw.deps, user)}` });
    await gw.deps.bus.publish('user.changed', { userId: 'someone-else' });
    expect(await stream.ended(300)).toBe(false);
    await gw.deps.bus.publish('user.changed', { userId: user.id });
    expect(await stream.ended(30_000)).toBe(true);
  });

  it('ends when its agent is disabled (through the catalog, as the admin API does)', async () => {
    const created = await gw.catalog.agents.create(gw.admin, {
      name: 'streaming-bot',
      upstreamUrl: 'http://127.0.0.1:9/agent',
    });
    const stream = await openStream(gw, { authorization: `Bearer ${created.runtimeToken}` });
    await gw.deps.bus.publish('agent.changed', { agentId: created.agent.id, change: 'updated' });
    expect(await stream.ended(300)).toBe(false);
    await gw.catalog.agents.setActive(gw.admin, created.agent.id, false);
    expect(await stream.ended(30_000)).toBe(true);
  });
});

// Evicting a session (past its caller's cap) or ending it (DELETE) made its requests 404 while
// its server stream went on carrying the session's notifications.
describe('MCP server streams end with their session', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGatewayUnderTest();
  });
  afterAll(() => gw?.close());

  it('ends when its session is ended with DELETE, not when another session is', async () => {
    const user = await createUser(gw.deps, { email: `deleter-${Date.now()}@example.com`, roles: ['agent_creator'] });
    const auth = { authorization: `Bearer ${await tokenFor(gw.deps, user)}` };
    const stream = await openStream(gw, auth);
    const other = await openStream(gw, auth);
    const del = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
      method: 'DELETE',
      headers: { ...auth, 'mcp-session-id': other.sid, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(del.status).toBe(204);
    expect(await other.ended(30_000)).toBe(true);
    expect(await stream.ended(300)).toBe(false);
    stream.close();
  });
});

// A stream keeps its session in use (its upstream-stream sync reads the session every second), so
// at the default cap of 32 a slow machine evicted another, older session instead of the stream's;
// with a cap of 1 the stream's session is the one the next initialize evicts, whatever the timing.
describe('MCP server streams end with their evicted session', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGatewayUnderTest({ sessions: (deps) => new MemorySessionStore(deps.clock, { maxPerOwner: 1 }) });
  });
  afterAll(() => gw?.close());

  it("ends when its session is evicted by the caller's initialize past the per-caller cap", async () => {
    const user = await createUser(gw.deps, { email: `evicted-${Date.now()}@example.com`, roles: ['agent_creator'] });
    const auth = { authorization: `Bearer ${await tokenFor(gw.deps, user)}` };
    const stream = await openStream(gw, auth);
    expect(await stream.ended(300)).toBe(false);
    await initialize(gw, auth);
    expect(await stream.ended(30_000)).toBe(true);
  });
});

describe('MCP server streams and token expiry', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGatewayUnderTest({ env: { JWT_EXPIRES_IN: '3s' } });
  });
  afterAll(() => gw?.close());

  it('ends by the time the JWT it was opened with expires', async () => {
    const user = await createUser(gw.deps, { email: `short-${Date.now()}@example.com`, roles: ['agent_creator'] });
    const token = await tokenFor(gw.deps, user);
    const exp = credentialExpiry(new Headers({ authorization: `Bearer ${token}` }))!;
    const stream = await openStream(gw, { authorization: `Bearer ${token}` });
    expect(await stream.ended(exp - Date.now() + 10_000)).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(exp - 50);
  });
});

describe('credentialExpiry', () => {
  const jwt = (claims: Record<string, unknown>) =>
    `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
  it('is the earliest exp of the JWTs presented; null for opaque tokens and JWTs without exp', () => {
    expect(
      credentialExpiry(
        new Headers({ authorization: `Bearer ${jwt({ exp: 200 })}`, 'x-gateway-session-token': jwt({ exp: 100 }) }),
      ),
    ).toBe(100_000);
    expect(credentialExpiry(new Headers({ authorization: 'Bearer art_opaque', 'x-api-key': 'gk_x' }))).toBeNull();
    expect(credentialExpiry(new Headers({ authorization: `Bearer ${jwt({ sub: 'x' })}` }))).toBeNull();
    expect(credentialExpiry(new Headers({ authorization: 'Bearer a.!!!.c' }))).toBeNull();
  });
});
