import { newId, RedisEventBus } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { directCredentialResolver } from '@agentgw/credentials';
import { startRecordingUpstream, type RecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { replicaDeps, testHost } from '@agentgw/service-kit/testing';
import { createInvokeProxyService } from './service.js';
import {
  insertAgent,
  invokeRequest,
  signedInUser,
  startInvokeProxyUnderTest,
  type Harness,
  type SignedInUser,
} from './invoke-proxy.fixtures.js';

const redisUrl = process.env.TEST_REDIS_URL;

/** Two replicas on one database and one Redis: a disable announced by one stops the other at once. */
describe.skipIf(!redisUrl).each(testBackends())('kill switch across replicas over Redis (%s)', (backend) => {
  let h: Harness;
  let up: RecordingUpstream;
  let alice: SignedInUser;
  let busOfA: RedisEventBus;
  let busOfB: RedisEventBus;

  beforeAll(async () => {
    h = await startInvokeProxyUnderTest(backend);
    up = await startRecordingUpstream();
    alice = await signedInUser(h.deps, { email: 'alice@example.com', roles: ['agent_creator'], tenantId: 'tenant-a' });
    const prefix = `invoke-proxy-test-${newId()}`;
    busOfA = new RedisEventBus({ url: redisUrl!, prefix });
    busOfB = new RedisEventBus({ url: redisUrl!, prefix });
  });
  afterAll(async () => {
    await busOfA?.close();
    await busOfB?.close();
    await up?.close();
    await h?.close();
  });

  it('replica A answers 403 after replica B disables the agent, without waiting for the cache TTL', async () => {
    // Replica A's process: its own catalog reader (agents cached far longer than the test) and auth, hearing busOfA.
    const depsOfA = await replicaDeps(h.deps, busOfA, { agentTtlMs: 600_000 });
    onTestFinished(() => depsOfA.close());
    const replicaA = await testHost(
      createInvokeProxyService({ credentials: () => directCredentialResolver(h.vault) }),
      depsOfA,
    );
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    const invoke = () => replicaA.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(alice.token));
    expect((await invoke()).status).toBe(200); // cached on A

    await h.deps.db.updateTable('agents').set({ is_active: false }).where('id', '=', agent.id).execute();
    // Replica B announces the change; repeated only because A's SUBSCRIBE may still be in flight.
    await vi.waitFor(
      async () => {
        await busOfB.publish('agent.changed', { agentId: agent.id, change: 'disabled' });
        expect((await invoke()).status).toBe(403);
      },
      { interval: 50 },
    );
  });
});
