import { createServer, type AddressInfo } from 'node:net';

/**
 * A loopback port nobody listens on now, chosen by the kernel. A random pick could land on a
 * port a load run's own connections hold (the bench's range overlapped the ephemeral range,
 * and one run failed with EADDRINUSE); the kernel never hands out a port in use.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
