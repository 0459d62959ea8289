import { serve, type RunningServer } from '@agentgw/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubUnderTest, type HubFixture } from './hub.fixtures.js';
import { SseEventReader } from '@agentgw/testkit';

/** The value of one sample line (`name 3`); undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("the hub's series on /metrics", () => {
  let hub: HubFixture;
  let server: RunningServer;

  beforeAll(async () => {
    hub = await startHubUnderTest();
    server = await serve(hub.host.app, {
      port: 0,
      hostname: '127.0.0.1',
      deps: { close: async () => {} },
      logger: hub.deps.logger,
      handleSignals: false,
      stopServices: (o) => hub.host.stop(o),
    });
  });
  afterAll(async () => {
    await server.shutdown();
    await hub.close();
  });

  // Without METRICS_TOKEN the public /metrics answers 404: scrape what the loopback METRICS_PORT listener serves.
  const scrape = async (): Promise<string> => (await hub.host.metricsApp.request('/metrics')).text();

  it('counts open SSE clients and held confirmations as they come and go', async () => {
    let text = await scrape();
    expect(sample(text, 'agentgw_sse_clients')).toBe(0);
    expect(sample(text, 'agentgw_confirmations_held')).toBe(0);

    const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/stream`, {
      headers: { authorization: `Bearer ${hub.alice.token}` },
    });
    const reader = new SseEventReader(res);
    await reader.next(); // connected
    const controller = new AbortController();
    const held = await hub.hold({}, controller.signal);
    text = await scrape();
    expect(sample(text, 'agentgw_sse_clients')).toBe(1);
    expect(sample(text, 'agentgw_confirmations_held')).toBe(1);
    expect(text).toContain('agentgw_http_requests_total{method="GET",route="/api/v1/stream",status="200"} 1');

    const confirm = await hub.host.request(`/api/v1/confirmation/${held.id}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hub.alice.token}` },
    });
    expect(confirm.status).toBe(200);
    await held.outcome;
    await reader.close();
    await expect.poll(async () => sample(await scrape(), 'agentgw_sse_clients')).toBe(0);
    expect(sample(await scrape(), 'agentgw_confirmations_held')).toBe(0);
  });
});
