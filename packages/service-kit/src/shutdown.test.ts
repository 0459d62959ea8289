import { get } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startDemoProcess } from './demo-processes.js';

/** A GET on a connection of its own (no pool), resolving with the status. */
function freshConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

describe('graceful shutdown of a real process', () => {
  it('on SIGTERM: refuses new connections, lets the slow request finish, ends the SSE stream, closes deps, exits 0 once drained', async () => {
    // A bound beyond the test's timeout: a process that waited it out instead of exiting once drained fails by that timeout.
    const demo = await startDemoProcess({ SLOW_MS: '800', SHUTDOWN_TIMEOUT_MS: '600000' });
    const { port, child, exit } = demo;
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);

    const stream = await fetch(`${base}/stream`);
    const reader = stream.body!.getReader();
    let events = new TextDecoder().decode((await reader.read()).value);
    expect(events).toContain('event: hello');
    const streamEnded = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return events;
        events += new TextDecoder().decode(value);
      }
    })();
    const slow = fetch(`${base}/slow`).then(async (r) => ({ status: r.status, text: await r.text() }));
    await new Promise((r) => setTimeout(r, 100)); // the slow request is in flight

    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 150));
    // A new connection is refused; a kept-alive one is either closed already or told not ready.
    await expect(freshConnection(`${base}/health/live`)).rejects.toThrow(/ECONNREFUSED/);
    expect([503, 'closed']).toContain(
      await fetch(`${base}/health/ready`).then(
        (r) => r.status,
        () => 'closed',
      ),
    );

    expect(await slow).toEqual({ status: 200, text: 'slow done' });
    expect(await streamEnded).toContain('event: shutdown'); // ended cleanly by the service's stop()
    expect(await exit).toBe(0);
    expect(demo.output()).toContain('deps closed');
  }, 200_000);
});
