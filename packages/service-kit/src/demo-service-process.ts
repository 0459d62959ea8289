import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { createHost } from './host.js';
import { serve } from './serve.js';
import { defineService } from './service-definition.js';
import { initTracing } from './tracing.js';
import { createTestDeps } from './testing.js';

/**
 * A child process for the shutdown and tracing tests: the production host and `serve` around a
 * service with a slow route, an SSE stream that its `stop()` ends (as the hub's does) and a hop
 * that calls `PEER_URL` (as invoke-proxy calls the vault). Tracing as `runService` does it (on
 * when `OTEL_EXPORTER_OTLP_ENDPOINT` is set). Prints `listening <port>` when ready and
 * `deps closed` once its pools are released.
 */
const tracing = initTracing({ serviceName: 'demo' });
const slowMs = Number(process.env.SLOW_MS ?? 500);
const streams = new Set<() => void>();
const demo = defineService({
  name: 'drain-demo',
  defaultPort: 0,
  create: () => ({
    routes: new Hono()
      .get('/slow', async (c) => {
        await new Promise((resolve) => setTimeout(resolve, slowMs));
        return c.text('slow done');
      })
      .get('/api/v1/hop/:n', async (c) => {
        const peer = process.env.PEER_URL;
        if (!peer) return c.json({ hops: [process.env.OTEL_SERVICE_NAME] });
        const next = (await (await fetch(`${peer}/api/v1/hop/${c.req.param('n')}`)).json()) as { hops: string[] };
        return c.json({ hops: [process.env.OTEL_SERVICE_NAME, ...next.hops] });
      })
      .get('/stream', (c) =>
        streamSSE(c, async (stream) => {
          await stream.writeSSE({ event: 'hello', data: 'open' });
          await new Promise<void>((resolve) => streams.add(resolve));
          await stream.writeSSE({ event: 'shutdown', data: 'bye' });
        }),
      ),
    async stop() {
      for (const end of streams) end();
      streams.clear();
    },
  }),
});

const deps = await createTestDeps();
const host = await createHost([demo], deps, { name: 'drain-demo' });
await host.start();
const running = await serve(host.app, {
  port: 0,
  hostname: '127.0.0.1',
  deps: {
    close: async () => {
      await deps.close();
      await tracing.shutdown(); // flushes spans not yet exported
      process.stdout.write('deps closed\n');
    },
  },
  logger: deps.logger,
  shutdownTimeoutMs: Number(process.env.SHUTDOWN_TIMEOUT_MS ?? 3_000),
  onDrain: host.drain,
  stopServices: host.stop,
});
process.stdout.write(`listening ${running.port}\n`);
