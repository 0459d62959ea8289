import type { EventBus, EventName } from '@agentgw/core';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { authHeaders, createUser, startRecordingUpstream, tokenFor, type RecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '@agentgw/service-kit';
import { createGatewayHost } from './all-in-one.js';

/** The bus as the host sees it, counting the subscriptions made through it per event. */
function countingBus(bus: EventBus): EventBus & { subscriptions: Map<EventName, number> } {
  const subscriptions = new Map<EventName, number>();
  return {
    subscriptions,
    publish: (event, payload) => bus.publish(event, payload),
    subscribe: (event, handler) => {
      subscriptions.set(event, (subscriptions.get(event) ?? 0) + 1);
      return bus.subscribe(event, handler);
    },
    close: () => bus.close(),
  };
}

/**
 * One catalog per process: the all-in-one's services and auth read agents, providers and rules
 * through the one started reader of the deps, so no service builds (and subscribes) another.
 */
describe('the all-in-one shares one started catalog reader', () => {
  let deps: TestDeps;
  let bus: ReturnType<typeof countingBus>;
  let host: Host;
  let upstream: RecordingUpstream;
  beforeAll(async () => {
    deps = await createTestDeps({ env: { EGRESS_POLICY: 'allow-private' } });
    upstream = await startRecordingUpstream();
    bus = countingBus(deps.bus);
    host = await createGatewayHost({ ...deps, bus });
    await host.start();
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await upstream?.close();
    await deps?.close();
  });

  it('starts no reader of its own in any service: nothing subscribes to rules.changed or a second providers.changed', () => {
    expect(bus.subscriptions.get('rules.changed') ?? 0).toBe(0);
    // Besides the shared reader, mcp-gateway's three per-process caches keyed by provider listen:
    // the upstream tool lists, the exposed tool names and the tool pins. No service adds a catalog.
    expect(bus.subscriptions.get('providers.changed') ?? 0).toBe(3);
  });

  it('applies the kill switch to invoke and to the agent’s own token at once, through the one reader', async () => {
    const admin = await createUser(deps, { email: 'shared-admin@example.com', roles: ['admin'] });
    const token = await tokenFor(deps, admin);
    const created = await host.app.request('/api/v1/admin/agents', {
      method: 'POST',
      headers: authHeaders(token),
      body: JSON.stringify({ name: 'shared-bot', upstreamUrl: upstream.url }),
    });
    const { agent, runtime_token: runtimeToken } = (await created.json()) as {
      agent: { id: string };
      runtime_token: string;
    };
    const invoke = () =>
      host.app.request(`/api/v1/agents/${agent.id}/invoke`, {
        method: 'POST',
        headers: authHeaders(token),
        body: JSON.stringify({ message: 'hi' }),
      });
    const asAgent = () =>
      host.app.request('/api/v1/tool-gate/evaluate', {
        method: 'POST',
        headers: authHeaders(runtimeToken),
        body: JSON.stringify({ toolName: 'echo', providerId: 'none' }),
      });
    expect((await invoke()).status).toBe(200);
    expect((await asAgent()).status).not.toBe(403);
    expect((await deps.catalog.agents.get(agent.id))?.isActive).toBe(true); // the entry the services read

    const disabled = await host.app.request(`/api/v1/admin/agents/${agent.id}/disable`, {
      method: 'POST',
      headers: authHeaders(token),
    });
    expect(disabled.status).toBe(200);
    expect((await deps.catalog.agents.get(agent.id))?.isActive).toBe(false);
    expect(await (await invoke()).json()).toMatchObject({ code: 'AGENT_DISABLED' });
    expect(await (await asAgent()).json()).toMatchObject({ code: 'AGENT_DISABLED' });
  });
});
