import { silentLogger } from '@agentgw/core';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Hono } from 'hono';
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer } from './serve.js';
import { defineService } from './service-definition.js';
import { createTestDeps, testHost, type TestDeps, type TestHost } from './testing.js';
import { currentTraceHeaders, initTracing, tracingConfigured, withTraceHeaders, type Tracing } from './tracing.js';

/** Two services on real ports: `front` calls `back` over HTTP, as invoke-proxy calls the vault. */
describe('tracing across services', () => {
  let deps: TestDeps;
  let front: TestHost;
  let back: TestHost;
  const servers: RunningServer[] = [];
  let backUrl = '';
  let seenTraceparent: (string | undefined)[] = [];
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing | undefined;

  beforeAll(async () => {
    deps = await createTestDeps();
    back = await testHost(
      defineService({
        name: 'back',
        defaultPort: 0,
        create: () => ({
          routes: new Hono().get('/internal/v1/things/:id', (c) => {
            seenTraceparent.push(c.req.header('traceparent'));
            return c.json({ id: c.req.param('id') });
          }),
        }),
      }),
      deps,
    );
    front = await testHost(
      defineService({
        name: 'front',
        defaultPort: 0,
        create: () => ({
          routes: new Hono().get('/api/v1/things/:id', async (c) =>
            c.json(await (await fetch(`${backUrl}/internal/v1/things/${c.req.param('id')}`)).json()),
          ),
        }),
      }),
      deps,
    );
    for (const host of [back, front]) {
      servers.push(
        await serve(host.app, {
          port: 0,
          hostname: '127.0.0.1',
          deps: { close: async () => {} },
          logger: silentLogger(),
          handleSignals: false,
        }),
      );
    }
    backUrl = `http://127.0.0.1:${servers[0]!.port}`;
  });
  afterAll(async () => {
    for (const s of servers) await s.shutdown();
    await tracing?.shutdown();
    await deps.close();
  });

  it('is off unless configured: no traceparent leaves the process', async () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(
      false,
    );
    expect(initTracing({ serviceName: 'front', env: {} }).enabled).toBe(false);
    seenTraceparent = [];
    const res = await fetch(`http://127.0.0.1:${servers[1]!.port}/api/v1/things/t1`);
    expect(await res.json()).toEqual({ id: 't1' });
    expect(seenTraceparent).toEqual([undefined]);
    expect(currentTraceHeaders()).toBeUndefined();
  });

  it('one trace crosses both services: front server span → client span → back server span', async () => {
    tracing = initTracing({ serviceName: 'gateway', spanProcessors: [new SimpleSpanProcessor(exporter)] });
    expect(tracing.enabled).toBe(true);
    seenTraceparent = [];
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    // node:http, not fetch: the test's own call must not become a traced outbound request.
    const body = await new Promise<string>((resolve, reject) => {
      get(
        `http://127.0.0.1:${servers[1]!.port}/api/v1/things/t2`,
        { headers: { traceparent: `00-${callerTrace}-b7ad6b7169203331-01` } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve(text));
        },
      ).on('error', reject);
    });
    expect(JSON.parse(body)).toEqual({ id: 't2' });

    const spans = exporter.getFinishedSpans();
    const frontSpan = spans.find((s) => s.attributes['agentgw.service'] === 'front');
    const backSpan = spans.find((s) => s.attributes['agentgw.service'] === 'back');
    const clientSpan = spans.find((s) => s.name === `GET 127.0.0.1:${servers[0]!.port}`);
    expect(frontSpan?.name).toBe('GET /api/v1/things/:id');
    expect(backSpan?.name).toBe('GET /internal/v1/things/:id');
    expect(frontSpan?.spanContext().traceId).toBe(callerTrace); // the caller's trace is continued
    expect(frontSpan?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(clientSpan?.parentSpanContext?.spanId).toBe(frontSpan?.spanContext().spanId);
    expect(backSpan?.parentSpanContext?.spanId).toBe(clientSpan?.spanContext().spanId);
    expect(backSpan?.spanContext().traceId).toBe(callerTrace);
    expect(seenTraceparent[0]).toMatch(new RegExp(`^00-${callerTrace}-${clientSpan?.spanContext().spanId}-01$`));
  });

  it('carries the context through non-HTTP metadata (events, jobs)', async () => {
    exporter.reset();
    let carried: Record<string, string> | undefined;
    await withTraceHeaders('publish', undefined, async () => {
      carried = currentTraceHeaders();
    });
    expect(carried?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await withTraceHeaders('consume', carried, async () => {});
    const [producer, consumer] = exporter.getFinishedSpans();
    expect(consumer?.spanContext().traceId).toBe(producer?.spanContext().traceId);
    expect(consumer?.parentSpanContext?.spanId).toBe(producer?.spanContext().spanId);
  });
});
