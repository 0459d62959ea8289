import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from './serve.js';
import { defineService } from './service-definition.js';
import { createTestDeps, testHost, type TestDeps, type TestHost } from './testing.js';

/** The value of one sample line, e.g. `name{a="b"} 3`; undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  let deps: TestDeps;
  let host: TestHost;
  let upstream: Server;
  let upstreamUrl: string;
  let clients = 0;

  beforeAll(async () => {
    upstream = createServer((_req, res) => setTimeout(() => res.end('pong'), 20));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    deps = await createTestDeps();
    const things = defineService({
      name: 'things',
      defaultPort: 0,
      create: (d) => {
        d.metrics?.gauge('agentgw_sse_clients', 'Open SSE streams', () => clients);
        const routes = new Hono()
          .get('/api/v1/things/:id', (c) => c.json({ id: c.req.param('id') }))
          .get('/api/v1/ping-upstream', async (c) => c.text(await (await fetch(`${upstreamUrl}/ping`)).text()));
        return { routes };
      },
    });
    host = await testHost(things, deps);
  });
  afterAll(async () => {
    await host.stop({ deadlineMs: 1_000 });
    await deps.close();
    await new Promise((resolve) => upstream.close(resolve));
  });

  // Without METRICS_TOKEN the series are served only by the loopback listener's app.
  const scrape = async (): Promise<string> => {
    const res = await host.metricsApp.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  };

  it('counts requests by route pattern, never by raw path, and the counts move', async () => {
    const series = 'agentgw_http_requests_total{method="GET",route="/api/v1/things/:id",status="200"}';
    const before = sample(await scrape(), series) ?? 0;
    await host.request('/api/v1/things/thing_secret_1');
    await host.request('/api/v1/things/thing_secret_2');
    await host.request('/nowhere/at/all');
    const text = await scrape();
    expect(sample(text, series)).toBe(before + 2);
    expect(
      sample(text, 'agentgw_http_requests_total{method="GET",route="unmatched",status="404"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('thing_secret');
    expect(text).not.toContain('/nowhere');
    expect(
      sample(text, 'agentgw_http_request_duration_seconds_count{method="GET",route="/api/v1/things/:id",status="200"}'),
    ).toBe(before + 2);
    expect(text).toContain('process_resident_memory_bytes'); // default process metrics
  });

  it('times outbound calls by origin and reads service gauges at scrape time', async () => {
    const origin = upstreamUrl;
    const count = `agentgw_upstream_request_duration_seconds_count{origin="${origin}",status="200"}`;
    const before = sample(await scrape(), count) ?? 0;
    expect(await (await host.request('/api/v1/ping-upstream')).text()).toBe('pong');
    const text = await scrape();
    expect(sample(text, count)).toBe(before + 1);
    expect(
      sample(text, `agentgw_upstream_request_duration_seconds_sum{origin="${origin}",status="200"}`),
    ).toBeGreaterThanOrEqual(0.015);

    expect(sample(text, 'agentgw_sse_clients')).toBe(0);
    clients = 3;
    expect(sample(await scrape(), 'agentgw_sse_clients')).toBe(3);
  });

  it('refuses /metrics on the public listener without METRICS_TOKEN, and serves it on 127.0.0.1:METRICS_PORT only', async () => {
    const running = await serve(host.app, {
      port: 0,
      hostname: '127.0.0.1',
      deps: { close: async () => {} },
      logger: deps.logger,
      handleSignals: false,
      metrics: { app: host.metricsApp, port: 0 },
    });
    try {
      const anonymous = await fetch(`http://127.0.0.1:${running.port}/metrics`);
      expect(anonymous.status).toBe(404);
      const body = await anonymous.text();
      expect(JSON.parse(body)).toMatchObject({ code: 'NOT_FOUND' });
      expect(body).not.toContain('agentgw_');
      expect(running.metricsPort).toEqual(expect.any(Number));
      const local = await fetch(`http://127.0.0.1:${running.metricsPort}/metrics`);
      expect(local.status).toBe(200);
      expect(await local.text()).toContain('agentgw_http_requests_total');
      // Bound to loopback only: not reachable on the machine's other addresses.
      const external = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal);
      if (external) await expect(fetch(`http://${external.address}:${running.metricsPort}/metrics`)).rejects.toThrow();
      // Only /metrics there: the API is not served on the private port.
      expect((await fetch(`http://127.0.0.1:${running.metricsPort}/api/v1/things/1`)).status).toBe(404);
    } finally {
      await running.shutdown();
    }
    await expect(fetch(`http://127.0.0.1:${running.metricsPort}/metrics`)).rejects.toThrow();
  });

  it('answers only the bearer token when METRICS_TOKEN is set', async () => {
    const guarded = await createTestDeps({ env: { METRICS_TOKEN: 'metrics-token-0123456789' } });
    try {
      const h = await testHost([], guarded, { name: 'guarded' });
      const refused = await h.request('/metrics');
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(
        (await h.request('/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789!' } })).status,
      ).toBe(401);
      const ok = await h.request('/metrics', { headers: { authorization: 'Bearer metrics-token-0123456789' } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('agentgw_http_requests_total');
    } finally {
      await guarded.close();
    }
  });
});
