import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpCredentialResolver } from './credential-resolvers.js';

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('httpCredentialResolver failures', () => {
  const auth = { signServiceToken: async () => 'token' };
  const input = { userId: 'u', tenantId: null, serviceTypes: ['github'] };
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await closeServer(server);
    server = undefined;
  });

  async function upstream(handler: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(handler);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('unreachable vault → 503', async () => {
    const url = await upstream(() => {});
    await closeServer(server!);
    server = undefined;
    await expect(httpCredentialResolver({ baseUrl: url, auth }).resolve(input)).rejects.toMatchObject({ status: 503 });
  });

  it('vault error status → 503', async () => {
    const url = await upstream((_req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"code":"INTERNAL_ERROR"}'));
    await expect(httpCredentialResolver({ baseUrl: url, auth }).resolve(input)).rejects.toMatchObject({ status: 503 });
  });

  it('malformed answer → 503', async () => {
    const url = await upstream((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"credentials":"nope"}'));
    await expect(httpCredentialResolver({ baseUrl: url, auth }).resolve(input)).rejects.toMatchObject({ status: 503 });
  });

  it('silent vault → 503 after the timeout', async () => {
    const url = await upstream(() => {});
    const started = Date.now();
    await expect(httpCredentialResolver({ baseUrl: url, auth, timeoutMs: 200 }).resolve(input)).rejects.toMatchObject({ status: 503 });
    expect(Date.now() - started).toBeLessThan(3_000);
    server!.closeAllConnections();
  });

  it('sends the service token and the request body', async () => {
    let seen: { headers: Record<string, unknown>; body: string } | undefined;
    const url = await upstream((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen = { headers: req.headers, body };
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"credentials":{},"missing":["github"],"authUrls":{"github":"u"}}');
      });
    });
    const result = await httpCredentialResolver({ baseUrl: url, auth: { signServiceToken: async (s, a) => `${s}->${a}` } }).resolve(input);
    expect(result).toEqual({ credentials: {}, missing: ['github'], authUrls: { github: 'u' } });
    expect(seen?.headers['x-service-token']).toBe('invoke-proxy->vault');
    expect(JSON.parse(seen!.body)).toEqual(input);
  });
});
