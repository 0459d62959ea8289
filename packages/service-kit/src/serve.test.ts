import { silentLogger } from '@agentgw/core';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { KEEP_ALIVE_TIMEOUT_MS, serve } from './serve.js';

describe('serve', () => {
  it('listens on 127.0.0.1, lets in-flight requests finish on shutdown, then closes deps', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const slowStarted = new Promise<void>((resolve) => (started = resolve));
    const app = new Hono()
      .get('/fast', (c) => c.text('fast'))
      .get('/slow', async (c) => {
        started();
        await released;
        return c.text('slow done');
      });
    let depsClosed = false;
    const running = await serve(app, {
      port: 0,
      hostname: '127.0.0.1',
      deps: { close: async () => void (depsClosed = true) },
      logger: silentLogger(),
      handleSignals: false,
    });
    const base = `http://127.0.0.1:${running.port}`;
    expect(await (await fetch(`${base}/fast`)).text()).toBe('fast');

    const slow = fetch(`${base}/slow`).then((r) => r.text());
    await slowStarted;
    const stopped = running.shutdown();
    await new Promise((r) => setTimeout(r, 50));
    expect(depsClosed).toBe(false);
    await expect(fetch(`${base}/fast`)).rejects.toThrow();

    release();
    expect(await slow).toBe('slow done');
    await stopped;
    expect(depsClosed).toBe(true);
  });

  it('keeps an idle connection longer than a load balancer does (65 s, not the 5 s default), and says so', async () => {
    const running = await serve(
      new Hono().get('/', (c) => c.text('ok')),
      {
        port: 0,
        hostname: '127.0.0.1',
        deps: { close: async () => undefined },
        logger: silentLogger(),
        handleSignals: false,
      },
    );
    try {
      // The Keep-Alive header Node writes is what a client or proxy reads to know how long it may reuse the connection.
      const keepAlive = await new Promise<string | undefined>((resolve, reject) => {
        const req = request({
          host: '127.0.0.1',
          port: running.port,
          path: '/',
          agent: false,
          headers: { connection: 'keep-alive' },
        });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => {
            req.destroy();
            const header = res.headers['keep-alive'];
            resolve(typeof header === 'string' ? header : undefined);
          });
        });
        req.on('error', reject);
        req.end();
      });
      expect(keepAlive).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
      expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(60_000);
    } finally {
      await running.shutdown();
    }
  });

  it('cuts connections that outlive the shutdown bound', { timeout: 30_000 }, async () => {
    // The handler never answers: shutdown() returning at all (within this test's 30 s hang bound) means the bound cut it.
    const app = new Hono().get('/hang', () => new Promise<Response>(() => {}));
    const running = await serve(app, {
      port: 0,
      hostname: '127.0.0.1',
      deps: { close: async () => {} },
      logger: silentLogger(),
      handleSignals: false,
      shutdownTimeoutMs: 100,
    });
    const hanging = fetch(`http://127.0.0.1:${running.port}/hang`).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 50));
    await running.shutdown();
    expect(await hanging).toBeInstanceOf(Error);
  });
});
