import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback forwarder that adds one Authorization header: the conformance CLI cannot send headers itself. */
export interface HeaderForwarder {
  /** The forwarder's origin; append the gateway path to it. */
  origin: string;
  close(): Promise<void>;
}

/**
 * Forwards every request to `target` (an http origin) unchanged — method, path, body, Host and
 * Origin headers as the suite sent them (the DNS-rebinding scenario depends on them), streamed both
 * ways so SSE passes through — with `Authorization: Bearer <token>` added.
 */
export async function startHeaderForwarder(target: string, token: string): Promise<HeaderForwarder> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const outgoing = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    outgoing.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('forwarder: gateway unreachable');
    });
    res.on('close', () => outgoing.destroy());
    req.pipe(outgoing);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
