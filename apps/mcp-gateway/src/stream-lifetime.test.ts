import { createUser, tokenFor } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialExpiry } from './credential-expiry.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

// An open MCP server stream (GET) used to outlive everything that authorised it: a demoted or
// deleted user, a disabled agent, an expired login token kept it open until the client left.

type Stream = { ended: (withinMs: number) => Promise<boolean>; close: () => void };

async function openStream(gw: GatewayUnderTest, headers: Record<string, string>): Promise<Stream> {
  const init = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
  expect(init.status).toBe(200);
  const controller = new AbortController();
  const res = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
    headers: { ...headers, accept: 'text/event-stream', 'mcp-session-id': init.headers.get('mcp-session-id')! },
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
    expect(await stream.ended(3_000)).toBe(true);
  });

  it('ends when its agent is disabled (through the catalog, as the admin API does)', async () => {
    const created = await gw.catalog.agents.create(gw.admin, { name: 'streaming-bot', upstreamUrl: 'http://127.0.0.1:9/agent' });
    const stream = await openStream(gw, { authorization: `Bearer ${created.runtimeToken}` });
    await gw.deps.bus.publish('agent.changed', { agentId: created.agent.id, change: 'updated' });
    expect(await stream.ended(300)).toBe(false);
    await gw.catalog.agents.setActive(gw.admin, created.agent.id, false);
    expect(await stream.ended(3_000)).toBe(true);
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
    expect(await stream.ended(exp - Date.now() + 1_000)).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(exp - 50);
  });
});

describe('credentialExpiry', () => {
  const jwt = (claims: Record<string, unknown>) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
  it('is the earliest exp of the JWTs presented; null for opaque tokens and JWTs without exp', () => {
    expect(credentialExpiry(new Headers({ authorization: `Bearer ${jwt({ exp: 200 })}`, 'x-gateway-session-token': jwt({ exp: 100 }) }))).toBe(100_000);
    expect(credentialExpiry(new Headers({ authorization: 'Bearer art_opaque', 'x-api-key': 'gk_x' }))).toBeNull();
    expect(credentialExpiry(new Headers({ authorization: `Bearer ${jwt({ sub: 'x' })}` }))).toBeNull();
    expect(credentialExpiry(new Headers({ authorization: 'Bearer a.!!!.c' }))).toBeNull();
  });
});
