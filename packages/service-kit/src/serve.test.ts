import { silentLogger } from '@agentgw/core';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { serve } from './serve.js';

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

  it('cuts connections that outlive the shutdown bound', async () => {
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
    const t0 = Date.now();
    await running.shutdown();
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(await hanging).toBeInstanceOf(Error);
  });
});
