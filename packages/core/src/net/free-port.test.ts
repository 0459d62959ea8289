import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './free-port.js';

describe('freePort', () => {
  it('gives a loopback port a server can then listen on', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });

  it('never gives a port that is being listened on, nor one port twice', async () => {
    const held = createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    const { port: heldPort } = held.address() as { port: number };
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(ports).not.toContain(heldPort);
    expect(new Set(ports).size).toBe(ports.length);
    await new Promise((resolve) => held.close(resolve));
  });

  it.runIf(process.platform === 'linux')('gives ports below the ephemeral range outgoing connections use', async () => {
    const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeLessThan(ephemeralLow);
      expect(port).toBeGreaterThanOrEqual(Math.max(1024, ephemeralLow - 16_384));
    }
  });
});
