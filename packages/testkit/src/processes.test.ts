import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { listenerOwner } from './listener-owner.js';
import { freePort, PortTakenError, startOnFreePort, startProcess, waitForHealthy } from './processes.js';

const server = (port: number) =>
  `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1', () => console.log('up ${port}'))`;

describe('process fixtures', () => {
  it('starts a process on a free port, waits for it to be healthy, and kills it by its PID', async () => {
    const port = await freePort();
    const proc = startProcess({
      name: 'tiny',
      command: process.execPath,
      args: ['-e', server(port)],
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? '' },
    });
    await waitForHealthy(`http://127.0.0.1:${port}/`, proc, 10_000);
    expect(proc.output()).toContain(`up ${port}`);
    await proc.stop('SIGKILL');
    expect(await proc.exited).toBe('SIGKILL');
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it('fails with the process output when it exits before it is healthy', async () => {
    const proc = startProcess({
      name: 'broken',
      command: process.execPath,
      args: ['-e', 'console.error("bad config: X"); process.exit(3)'],
      cwd: process.cwd(),
      env: {},
    });
    await expect(waitForHealthy(`http://127.0.0.1:${await freePort()}/`, proc, 10_000)).rejects.toThrow(
      /broken exited before it was healthy:\n.*bad config: X/,
    );
    expect(await proc.exited).toBe(3);
  });

  const tiny = (port: number) =>
    startProcess({
      name: `tiny:${port}`,
      command: process.execPath,
      args: ['-e', server(port)],
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? '' },
    });

  /** An HTTP server in this test process: outside every child's process tree, as another CI job's service is. */
  const foreign = async (port: number): Promise<Server> => {
    const other = createServer((_, res) => res.end('someone else'));
    await new Promise<void>((resolve) => other.listen(port, '127.0.0.1', resolve));
    return other;
  };
  const onLinux = process.platform === 'linux';

  it.runIf(onLinux)("tells its own listener from another process's on the same port", async () => {
    const port = await freePort();
    const proc = tiny(port);
    await waitForHealthy(`http://127.0.0.1:${port}/`, proc, 10_000);
    // A sibling: started beside it, not by it.
    const sibling = startProcess({
      name: 'sibling',
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      cwd: process.cwd(),
      env: {},
    });
    try {
      expect(listenerOwner(port, proc.pid)).toBe('ours');
      expect(listenerOwner(port, process.pid)).toBe('ours'); // its parent's tree holds it
      expect(listenerOwner(port, sibling.pid)).toBe('other');
      await proc.stop('SIGKILL');
      expect(listenerOwner(port, process.pid)).toBe('unknown');
    } finally {
      await sibling.stop('SIGKILL');
    }
  });

  it.runIf(onLinux)('refuses a health answer from a process that took the port first', async () => {
    const port = await freePort();
    const other = await foreign(port);
    const proc = tiny(port);
    try {
      const waited = waitForHealthy(`http://127.0.0.1:${port}/`, proc, 10_000);
      await expect(waited).rejects.toBeInstanceOf(PortTakenError);
      await expect(waited).rejects.toThrow(`port ${port} was taken by another process`);
    } finally {
      await proc.stop('SIGKILL');
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it.runIf(onLinux)(
    'starts again on a new free port when another process took the first, and kills the loser',
    async () => {
      const ports: number[] = [];
      const procs: ReturnType<typeof tiny>[] = [];
      let other: Server | undefined;
      const started = await startOnFreePort(
        (port) => {
          ports.push(port);
          // The race, made certain: a neighbour binds the port between freePort() and our listen.
          if (ports.length === 1) other = createServer((_, res) => res.end('someone else')).listen(port, '127.0.0.1');
          procs.push(tiny(port));
          return procs.at(-1)!;
        },
        (port) => `http://127.0.0.1:${port}/`,
        10_000,
      );
      try {
        expect(ports).toHaveLength(2);
        expect(started.port).toBe(ports[1]);
        expect(listenerOwner(started.port, started.process.pid)).toBe('ours');
        expect(procs[0]!.child.exitCode ?? procs[0]!.child.signalCode).not.toBeNull();
        expect(await fetch(`http://127.0.0.1:${ports[0]}/`).then((r) => r.text())).toBe('someone else');
      } finally {
        await started.process.stop('SIGKILL');
        await new Promise((resolve) => other?.close(resolve));
      }
    },
  );
});
