import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { egressPolicyFromConfig } from '@agentgw/core';
import { httpCredentialResolver } from './credential-resolvers.js';

/** An upstream of the request's tenant (the resolvers carry it to the vault unread). */
const recipient = { kind: 'agent' as const, tenantId: null, endpoint: 'https://agent.example.test/' };

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('httpCredentialResolver failures', () => {
  const auth = { signServiceToken: async () => 'token' };
  const input = { userId: 'u', tenantId: null, serviceTypes: ['github'], recipient };
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
    const url = await upstream((_req, res) =>
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"code":"INTERNAL_ERROR"}'),
    );
    await expect(httpCredentialResolver({ baseUrl: url, auth }).resolve(input)).rejects.toMatchObject({ status: 503 });
  });

  it('malformed answer → 503', async () => {
    const url = await upstream((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"credentials":"nope"}'),
    );
    await expect(httpCredentialResolver({ baseUrl: url, auth }).resolve(input)).rejects.toMatchObject({ status: 503 });
  });

  // Bounded like every answer read here: a vault (or whatever answers at its address) sending more
  // than one user's credentials could hold is refused, not buffered whole.
  it('an answer over 1 MiB → 503, not buffered', async () => {
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"credentials":{"github":"${'x'.repeat(2 * 1024 * 1024)}"},"missing":[],"authUrls":{}}`);
    });
    await expect(httpCredentialResolver({ baseUrl: url, auth }).resolve(input)).rejects.toMatchObject({
      status: 503,
      message: 'Credential vault is unreachable',
    });
  });

  it('an answer in several chunks is read whole', async () => {
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"credentials":{"github":"');
      setTimeout(() => res.end(`${'y'.repeat(100_000)}"},"missing":[],"authUrls":{}}`), 20);
    });
    const result = await httpCredentialResolver({ baseUrl: url, auth }).resolve(input);
    expect(result.credentials.github).toHaveLength(100_000);
  });

  // The vault never answers: only the resolver's timeout can end the call, and a resolver that
  // waited on fails by this test's 30 s hang bound.
  it('silent vault → 503 after the timeout, having hung up on the vault', { timeout: 30_000 }, async () => {
    let hungUp!: () => void;
    const vaultSawHangUp = new Promise<void>((resolve) => (hungUp = resolve));
    const url = await upstream((_req, res) => void res.on('close', hungUp));
    await expect(httpCredentialResolver({ baseUrl: url, auth, timeoutMs: 200 }).resolve(input)).rejects.toMatchObject({
      status: 503,
    });
    await vaultSawHangUp;
    server!.closeAllConnections();
  });

  it('sends the service token and the request body', async () => {
    let seen: { headers: Record<string, unknown>; body: string } | undefined;
    const url = await upstream((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen = { headers: req.headers, body };
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"credentials":{},"missing":["github"],"authUrls":{"github":"u"}}');
      });
    });
    const result = await httpCredentialResolver({
      baseUrl: url,
      auth: { signServiceToken: async (s, a) => `${s}->${a}` },
    }).resolve(input);
    expect(result).toEqual({ credentials: {}, missing: ['github'], authUrls: { github: 'u' } });
    expect(seen?.headers['x-service-token']).toBe('invoke-proxy->vault');
    expect(JSON.parse(seen!.body)).toEqual(input);
  });
});

describe('httpCredentialResolver through the egress policy', () => {
  const auth = { signServiceToken: async () => 'token' };
  const input = { userId: 'u', tenantId: null, serviceTypes: ['github'], recipient };
  const strict = egressPolicyFromConfig({ EGRESS_POLICY: 'public-only' });
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await closeServer(server);
    server = undefined;
  });

  async function vault(handler: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(handler);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('reaches the operator-configured vault on a private address even under public-only', async () => {
    const url = await vault((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ credentials: { github: 'x' }, missing: [], authUrls: {} })),
    );
    await expect(httpCredentialResolver({ baseUrl: url, auth, egress: strict }).resolve(input)).resolves.toEqual({
      credentials: { github: 'x' },
      missing: [],
      authUrls: {},
    });
  });

  it('does not follow a redirect away from the vault (503, the target never contacted)', async () => {
    let redirected = 0;
    const target = createServer((_req, res) => {
      redirected++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    try {
      const url = await vault((_req, res) =>
        res.writeHead(307, { location: `http://127.0.0.1:${(target.address() as AddressInfo).port}/x` }).end(),
      );
      await expect(httpCredentialResolver({ baseUrl: url, auth, egress: strict }).resolve(input)).rejects.toMatchObject(
        { status: 503 },
      );
      expect(redirected).toBe(0);
    } finally {
      await closeServer(target);
    }
  });
});
