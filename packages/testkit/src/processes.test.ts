import { describe, expect, it } from 'vitest';
import { freePort, startProcess, waitForHealthy } from './processes.js';

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
});
