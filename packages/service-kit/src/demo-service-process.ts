import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { createHost } from './host.js';
import { serve } from './serve.js';
import { defineService } from './service-definition.js';
import { createTestDeps } from './testing.js';

/**
 * A child process for the graceful-shutdown test: the production host and `serve` around a
 * service with a slow route and an SSE stream that its `stop()` ends, as the hub's does. Prints
 * `listening <port>` when ready and `deps closed` once its pools are released.
 */
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
      process.stdout.write('deps closed\n');
    },
  },
  logger: deps.logger,
  shutdownTimeoutMs: Number(process.env.SHUTDOWN_TIMEOUT_MS ?? 3_000),
  onDrain: host.drain,
  stopServices: host.stop,
});
process.stdout.write(`listening ${running.port}\n`);
