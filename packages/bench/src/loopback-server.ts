import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Runs one of the bench's own server processes (upstreams, bare proxy): listens on an ephemeral
 * 127.0.0.1 port with long keep-alive, prints `{"port":N}` once listening (what the bench waits
 * for), and exits 0 on SIGTERM after dropping its connections and running `closing`.
 */
export function serveOnLoopback(server: Server, closing: () => Promise<void> = async () => {}): void {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => void closing().then(() => process.exit(0)));
  });
}
