import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoProcess, type DemoProcess } from './demo-processes.js';

/** The parts of an OTLP/HTTP JSON export this test reads. */
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number }[] }[];
  }[];
}

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

/** A loopback OTLP receiver and two services in their own processes: front calls back over HTTP. */
describe('a trace across two service processes, exported over OTLP/HTTP', () => {
  let receiver: Server;
  const spans: ExportedSpan[] = [];
  const processes: DemoProcess[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
          for (const rs of (JSON.parse(body) as OtlpExport).resourceSpans) {
            const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
            for (const ss of rs.scopeSpans)
              for (const s of ss.spans)
                spans.push({
                  service,
                  traceId: s.traceId,
                  spanId: s.spanId,
                  parentSpanId: s.parentSpanId || undefined,
                  name: s.name,
                });
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('front server span → client span (traceparent sent) → back server span, one trace id, exported by both', async () => {
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    const back = await startDemoProcess({ ...otel, OTEL_SERVICE_NAME: 'back' });
    processes.push(back);
    const front = await startDemoProcess({
      ...otel,
      OTEL_SERVICE_NAME: 'front',
      PEER_URL: `http://127.0.0.1:${back.port}`,
    });
    processes.push(front);

    const res = await fetch(`http://127.0.0.1:${front.port}/api/v1/hop/42`);
    expect(await res.json()).toEqual({ hops: ['front', 'back'] });
    // SIGTERM flushes what the batch processor still holds.
    front.child.kill('SIGTERM');
    back.child.kill('SIGTERM');
    expect(await front.exit).toBe(0);
    expect(await back.exit).toBe(0);

    const frontServer = spans.find((s) => s.service === 'front' && s.name === 'GET /api/v1/hop/:n');
    const client = spans.find((s) => s.service === 'front' && s.name === `GET 127.0.0.1:${back.port}`);
    const backServer = spans.find((s) => s.service === 'back' && s.name === 'GET /api/v1/hop/:n');
    expect(frontServer, JSON.stringify(spans)).toBeDefined();
    expect(client?.parentSpanId).toBe(frontServer?.spanId);
    expect(backServer?.parentSpanId).toBe(client?.spanId);
    expect(new Set([frontServer?.traceId, client?.traceId, backServer?.traceId]).size).toBe(1);
  }, 400_000);
});
