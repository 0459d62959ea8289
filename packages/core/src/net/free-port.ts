import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** How many random ports below the ephemeral range are tried before the kernel is asked for one. */
const PICKS = 64;
/** How wide the band below the ephemeral range is (16,384 ports: 16384–32767 on Linux's default 32768–60999). */
const BAND = 16_384;

/**
 * Why: a port the kernel hands out (listen on 0) lies in the ephemeral range, and once released,
 * any outgoing connection on the machine may take it as its source port before the test's server
 * binds it (EADDRINUSE), or a neighbouring test's server may. Ports below that range are never
 * taken by outgoing connections, so a free one here stays free unless someone binds it on purpose.
 * Falls back to the kernel's choice where the range is unknown or the band is full.
 */
export async function freePort(): Promise<number> {
  const band = bandBelowEphemeral();
  if (band) {
    for (let pick = 0; pick < PICKS; pick++) {
      const port = band.low + Math.floor(Math.random() * (band.high - band.low));
      if (!handedOut.has(port) && (await listensOn(port))) return remember(port);
    }
  }
  return remember(await kernelPort());
}

/** Ports this process handed out lately: two starts racing in one Promise.all never get the same one. */
const handedOut = new Set<number>();
const REMEMBERED = 1_024;

function remember(port: number): number {
  handedOut.add(port);
  if (handedOut.size > REMEMBERED) handedOut.delete(handedOut.values().next().value!);
  return port;
}

/** [low, high) below the kernel's ephemeral range, or null where /proc does not say it or it starts too low. */
function bandBelowEphemeral(): { low: number; high: number } | null {
  let ephemeralLow: number;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return null;
  }
  if (!Number.isInteger(ephemeralLow) || ephemeralLow - BAND < 1024) return null;
  return { low: ephemeralLow - BAND, high: ephemeralLow };
}

/** Whether a server can listen on 127.0.0.1:`port` now (it is closed again before this resolves). */
function listensOn(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
