import { randomUUID } from 'node:crypto';
import { RedisRateLimiter, type RateLimiter } from '@agentgw/core';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { startRecordingUpstream, type RecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvokeProxyService } from './service.js';
import { insertAgent, invokeRequest, signedInUser, type SignedInUser } from './invoke-proxy.fixtures.js';

const redisUrl = process.env.TEST_REDIS_URL;

// Two replicas: on the in-process limiter they share one process's counters; on Redis each has
// its own connection to the shared counters, as in distributed mode.
const limiters: [string, () => RateLimiter | null][] = [['in-process', () => null]];
if (redisUrl) {
  const prefix = `test-${randomUUID()}`;
  limiters.push(['redis', () => new RedisRateLimiter({ url: redisUrl, prefix })]);
}

describe.each(limiters)('invoke rate limits per agent and per tenant (%s)', (_name, limiter) => {
  let deps: TestDeps;
  let up: RecordingUpstream;
  let replicas: TestHost[];
  let alice: SignedInUser;
  const own: RateLimiter[] = [];

  beforeAll(async () => {
    deps = await createTestDeps({
      env: { RATE_LIMIT_AGENT: '2', RATE_LIMIT_TENANT: '3', RATE_LIMIT_WINDOW_MS: '60000' },
    });
    up = await startRecordingUpstream();
    replicas = [];
    for (let i = 0; i < 2; i++) {
      const shared = limiter();
      if (shared) own.push(shared);
      replicas.push(await testHost(createInvokeProxyService(), shared ? { ...deps, rateLimiter: shared } : deps));
    }
    alice = await signedInUser(deps, {
      email: 'alice@example.com',
      roles: ['agent_creator'],
      tenantId: `t-${randomUUID()}`,
    });
  });
  afterAll(async () => {
    await Promise.all(own.map((l) => l.close()));
    await up?.close();
    await deps?.close();
  });

  const invoke = (replica: number, agentId: string, token: string) =>
    replicas[replica]!.request(`/api/v1/agents/${agentId}/invoke`, invokeRequest(token));

  it('answers 429 with Retry-After and the error body past the agent quota, across replicas, and nothing goes upstream', async () => {
    const agent = await insertAgent(deps, { upstreamUrl: up.url, tenantId: alice.tenantId });
    expect((await invoke(0, agent.id, alice.token)).status).toBe(200);
    expect((await invoke(1, agent.id, alice.token)).status).toBe(200);
    const before = up.requests.length;
    const refused = await invoke(0, agent.id, alice.token);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
    expect(await refused.json()).toEqual({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('agent'),
      retryAfter: expect.any(Number),
    });
    expect(up.requests.length).toBe(before);
  });

  it("shares the tenant quota among the tenant's agents", async () => {
    // The first test spent 3 of the tenant's 3 calls (the refused one counts too).
    const other = await insertAgent(deps, { upstreamUrl: up.url, tenantId: alice.tenantId });
    const refused = await invoke(1, other.id, alice.token);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('tenant') });
    const bob = await signedInUser(deps, {
      email: `bob-${randomUUID()}@example.com`,
      roles: ['agent_creator'],
      tenantId: `t-${randomUUID()}`,
    });
    const elsewhere = await insertAgent(deps, { upstreamUrl: up.url, tenantId: bob.tenantId });
    expect((await invoke(0, elsewhere.id, bob.token)).status).toBe(200);
  });
});
