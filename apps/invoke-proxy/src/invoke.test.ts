import { generateApiKey } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { replyJson, startRecordingUpstream, type RecordingUpstream } from '@agentgw/testkit';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  insertAgent,
  invokeRequest,
  listen,
  signedInUser,
  startInvokeProxyUnderTest,
  type Harness,
  type SignedInUser,
} from './invoke-proxy.fixtures.js';

describe.each(testBackends())('invoke (%s)', (backend) => {
  let h: Harness;
  let alice: SignedInUser;
  const upstreams: RecordingUpstream[] = [];
  const servers: { shutdown(): Promise<void> }[] = [];

  const upstream = async (...args: Parameters<typeof startRecordingUpstream>) => {
    const u = await startRecordingUpstream(...args);
    upstreams.push(u);
    return u;
  };

  beforeAll(async () => {
    h = await startInvokeProxyUnderTest(backend);
    alice = await signedInUser(h.deps, { email: 'alice@example.com', roles: ['agent_creator'], tenantId: 'tenant-a' });
    await h.vault.store({
      userId: alice.id,
      tenantId: 'tenant-a',
      serviceType: 'github',
      kind: 'api_key',
      secret: 'gh-alice-secret',
      expiresAt: null,
    });
    await h.vault.store({
      userId: alice.id,
      tenantId: 'tenant-a',
      serviceType: 'slack',
      kind: 'jwt',
      secret: 'slack.alice.jwt',
      expiresAt: null,
    });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.shutdown()));
    await Promise.all(upstreams.splice(0).map((u) => u.close()));
  });
  afterAll(async () => {
    await h.close();
  });

  const invoke = (agentId: string, init: RequestInit, app = h.app) =>
    app.request(`/api/v1/agents/${agentId}/invoke`, init);

  it('injects every identity and credential header and wraps a JSON answer', async () => {
    const up = await upstream();
    const agent = await insertAgent(h.deps, {
      upstreamUrl: `${up.url}/runtime`,
      upstreamSecret: 'upstream-s3cret',
      tenantId: 'tenant-a',
      requiredCredentials: [{ serviceType: 'github' }, { serviceType: 'slack', description: 'Posts' }],
    });
    const res = await invoke(
      agent.id,
      invokeRequest(alice.token, { message: 'summarise my PRs', context: { repo: 'a/b' } }),
    );
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-gateway-request-id');
    expect(requestId).toMatch(/^req_/);
    expect(await res.json()).toEqual({
      success: true,
      request_id: requestId,
      data: {
        ok: true,
        method: 'POST',
        path: '/runtime',
        body: { message: 'summarise my PRs', context: { repo: 'a/b' } },
      },
    });

    expect(up.requests).toHaveLength(1);
    const seen = up.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.headers).toMatchObject({
      'content-type': 'application/json',
      'x-user-id': alice.id,
      'x-end-user-id': alice.id,
      'x-end-user-email': 'alice@example.com',
      'x-end-user-roles': 'agent_creator',
      'x-tenant-id': 'tenant-a',
      'x-gateway-agent-id': agent.id,
      'x-gateway-request-id': requestId,
      'x-credential-github': 'gh-alice-secret',
      'x-credential-slack': 'slack.alice.jwt',
      authorization: 'Bearer upstream-s3cret',
    });
    expect(seen.headers['x-gateway-session-token']).toEqual(expect.any(String));
  });

  it('forwards the body byte for byte (numbers beyond double precision survive)', async () => {
    const raw = '{"message":"hi","n":12345678901234567890123,"nested":{"a":[1,2]}}';
    let received = '';
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received = Buffer.concat(chunks).toString('utf8');
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const agent = await insertAgent(h.deps, {
        upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
      });
      const res = await invoke(agent.id, invokeRequest(alice.token, raw));
      expect(res.status).toBe(200);
      expect(received).toBe(raw);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('gives each call its own request id', async () => {
    const up = await upstream();
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
    const a = await invoke(agent.id, invokeRequest(alice.token));
    const b = await invoke(agent.id, invokeRequest(alice.token));
    const ids = [a.headers.get('x-gateway-request-id'), b.headers.get('x-gateway-request-id')];
    expect(ids[0]).not.toBe(ids[1]);
    expect(up.requests.map((r) => r.headers['x-gateway-request-id'])).toEqual(ids);
  });

  it('drops spoofed identity, credential, cookie and hop-by-hop headers and sends no Authorization without a secret', async () => {
    const up = await upstream();
    const agent = await insertAgent(h.deps, {
      upstreamUrl: up.url,
      tenantId: 'tenant-a',
      requiredCredentials: [{ serviceType: 'github' }],
    });
    const res = await invoke(
      agent.id,
      invokeRequest(
        alice.token,
        { message: 'hi' },
        {
          'x-user-id': 'mallory',
          'x-end-user-id': 'mallory',
          'x-end-user-email': 'mallory@evil.test',
          'x-end-user-roles': 'admin',
          'x-tenant-id': 'tenant-b',
          'x-gateway-agent-id': 'other-agent',
          'x-gateway-request-id': 'req_forged',
          'x-credential-github': 'forged-github',
          'x-credential-aws': 'forged-aws',
          cookie: 'session=stolen',
          connection: 'keep-alive, x-hop',
          'x-hop': 'named in Connection',
          'keep-alive': 'timeout=5',
          'proxy-authorization': 'Basic Zm9v',
          'x-trace': 'not on the list',
          'metadata-flavor': 'Google',
          'x-aws-ec2-metadata-token': 'stolen',
          'x-forwarded-for': '10.0.0.1',
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          'accept-language': 'fr',
        },
      ),
    );
    expect(res.status).toBe(200);
    const seen = up.requests[0]!.headers;
    expect(seen).toMatchObject({
      'x-user-id': alice.id,
      'x-end-user-id': alice.id,
      'x-end-user-email': 'alice@example.com',
      'x-end-user-roles': 'agent_creator',
      'x-tenant-id': 'tenant-a',
      'x-gateway-agent-id': agent.id,
      'x-gateway-request-id': res.headers.get('x-gateway-request-id'),
      'x-credential-github': 'gh-alice-secret',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'accept-language': 'fr',
    });
    // The caller's own JWT is for the gateway; this agent has no upstream secret.
    expect(seen.authorization).toBeUndefined();
    // Only the documented allow-list of caller headers travels on.
    for (const dropped of [
      'x-credential-aws',
      'cookie',
      'x-hop',
      'keep-alive',
      'proxy-authorization',
      'x-api-key',
      'x-trace',
      'metadata-flavor',
      'x-aws-ec2-metadata-token',
      'x-forwarded-for',
    ]) {
      expect(seen[dropped]).toBeUndefined();
    }
  });

  it('acts for the X-User-Id user when called with an API key, and never forwards the key', async () => {
    const up = await upstream();
    const key = generateApiKey();
    const creator = await signedInUser(h.deps, { email: 'root@example.com', roles: ['admin'], tenantId: null });
    await h.deps.db
      .insertInto('api_keys')
      .values({
        id: newId(),
        name: 'runtime',
        key_hash: key.hash,
        key_prefix: key.prefix,
        scopes: ['credentials:resolve'],
        user_id: creator.id,
        tenant_id: null,
      })
      .execute();
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    const res = await h.app.request(`/api/v1/agents/${agent.id}/invoke`, {
      method: 'POST',
      headers: { 'x-api-key': key.token, 'x-user-id': alice.id, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hi' }),
    });
    expect(res.status).toBe(200);
    const seen = up.requests[0]!.headers;
    expect(seen['x-user-id']).toBe(alice.id);
    expect(seen['x-end-user-email']).toBe('alice@example.com');
    expect(seen['x-api-key']).toBeUndefined();
  });

  it('refuses a bare runtime token: there is no user to act for', async () => {
    const up = await upstream();
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
    const res = await invoke(agent.id, invokeRequest(agent.runtimeToken));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(res.headers.get('x-gateway-request-id')).toMatch(/^req_/);
    expect(up.requests).toHaveLength(0);
  });

  it('issues a session token that authenticates back as the end user with the matching X-Agent-Id only', async () => {
    const up = await upstream();
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    const other = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    expect((await invoke(agent.id, invokeRequest(alice.token))).status).toBe(200);
    const sessionToken = up.requests[0]!.headers['x-gateway-session-token'] as string;

    const principal = await h.deps.auth.authenticate(
      new Headers({ 'x-gateway-session-token': sessionToken, 'x-agent-id': agent.id }),
      'flexible',
    );
    expect(principal).toMatchObject({
      via: 'session_token',
      userId: alice.id,
      endUserId: alice.id,
      email: 'alice@example.com',
      roles: ['agent_creator'],
      tenantId: 'tenant-a',
      agentId: agent.id,
    });
    await expect(
      h.deps.auth.authenticate(
        new Headers({ 'x-gateway-session-token': sessionToken, 'x-agent-id': other.id }),
        'flexible',
      ),
    ).rejects.toMatchObject({ status: 401 });
    await expect(
      h.deps.auth.authenticate(new Headers({ 'x-gateway-session-token': sessionToken }), 'flexible'),
    ).rejects.toMatchObject({
      status: 401,
    });
  });

  it('validates the body: message is required, the body must be a JSON object, and it is capped', async () => {
    const up = await upstream();
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
    const missing = await invoke(agent.id, invokeRequest(alice.token, { text: 'no message' }));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'message' });
    const wrongType = await invoke(agent.id, invokeRequest(alice.token, { message: 42 }));
    expect(await wrongType.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'message' });
    const malformed = await invoke(agent.id, invokeRequest(alice.token, '{"message":'));
    expect(malformed.status).toBe(400);
    const array = await invoke(agent.id, invokeRequest(alice.token, '["message"]'));
    expect(array.status).toBe(400);

    const small = await h.newApp({ maxRequestBytes: 64 });
    const tooBig = await invoke(agent.id, invokeRequest(alice.token, { message: 'x'.repeat(100) }), small);
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(up.requests).toHaveLength(0);
  });

  it('passes an upstream error status through with success: false, and wraps text answers', async () => {
    const up = await upstream((req, res) => {
      if (req.path === '/fail') return replyJson(res, 503, { error: 'overloaded' });
      if (req.path === '/redirect') {
        res.writeHead(302, { location: 'http://elsewhere.test/' }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('plain answer');
    });
    const failing = await insertAgent(h.deps, { upstreamUrl: `${up.url}/fail` });
    const res = await invoke(failing.id, invokeRequest(alice.token));
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      success: false,
      request_id: res.headers.get('x-gateway-request-id'),
      upstream_status: 503,
      data: { error: 'overloaded' },
    });

    const redirecting = await insertAgent(h.deps, { upstreamUrl: `${up.url}/redirect` });
    const redirected = await invoke(redirecting.id, invokeRequest(alice.token));
    expect(redirected.status).toBe(502);
    expect(await redirected.json()).toMatchObject({ success: false, upstream_status: 302, data: null });

    const texting = await insertAgent(h.deps, { upstreamUrl: `${up.url}/text` });
    const text = await invoke(texting.id, invokeRequest(alice.token));
    expect(text.status).toBe(200);
    expect(await text.json()).toMatchObject({ success: true, data: 'plain answer' });
  });

  it('answers 502 when a non-streaming answer exceeds maxResponseBytes', async () => {
    const up = await upstream((_req, res) => replyJson(res, 200, { blob: 'x'.repeat(500) }));
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
    const res = await invoke(agent.id, invokeRequest(alice.token), await h.newApp({ maxResponseBytes: 100 }));
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect((await invoke(agent.id, invokeRequest(alice.token))).status).toBe(200);
  });

  it('answers 502 UPSTREAM_ERROR when the upstream refuses the connection', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const agent = await insertAgent(h.deps, { upstreamUrl: `http://127.0.0.1:${port}/` });
    const res = await invoke(agent.id, invokeRequest(alice.token));
    expect(res.status).toBe(502);
    const body = await res.json();
    expect(body).toEqual({ code: 'UPSTREAM_ERROR', message: expect.any(String) });
    expect(res.headers.get('x-gateway-request-id')).toMatch(/^req_/);
  });

  // The upstream never answers: only the proxy's timeout can end the call, and a proxy that waited
  // on fails by this test's 30 s hang bound.
  it(
    'answers 504 UPSTREAM_TIMEOUT when the upstream sends no headers in time, hanging up on it',
    { timeout: 30_000 },
    async () => {
      let hungUp!: () => void;
      const upstreamSawHangUp = new Promise<void>((resolve) => (hungUp = resolve));
      const up = await upstream((_req, res) => new Promise(() => void res.on('close', hungUp)));
      const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
      const res = await invoke(agent.id, invokeRequest(alice.token), await h.newApp({ upstreamTimeoutMs: 200 }));
      expect(res.status).toBe(504);
      expect(await res.json()).toEqual({ code: 'UPSTREAM_TIMEOUT', message: expect.any(String) });
      await upstreamSawHangUp;
    },
  );

  it('relays an SSE answer unchanged, the first event before the upstream has finished', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let upstreamEnded = false;
    const first = 'event: token\ndata: {"t":"first"}\n\n';
    const rest = 'event: token\ndata: {"t":"second"}\n\nevent: done\ndata: {}\n\n';
    const up = await upstream(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(first);
      await released;
      res.end(rest);
      upstreamEnded = true;
    });
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
    const server = await listen(h);
    servers.push(server);

    const res = await fetch(`${server.url}/api/v1/agents/${agent.id}/invoke`, invokeRequest(alice.token));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('x-gateway-request-id')).toMatch(/^req_/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    expect(received).toBe(first);
    expect(upstreamEnded).toBe(false);

    release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    expect(received).toBe(first + rest);
    expect(upstreamEnded).toBe(true);
  });

  // The relay pauses the upstream while the caller does not read: what an endless or huge stream
  // can make the gateway hold is the sockets' buffers, not the whole stream.
  it('holds back an SSE upstream whose caller does not read', { timeout: 30_000 }, async () => {
    const total = 96 * 1024 * 1024;
    const event = `data: ${'x'.repeat(1016)}\n\n`;
    let written = 0;
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pump = () => {
        while (written < total) {
          written += event.length;
          if (!res.write(event)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
    const server = await listen(h);
    servers.push(server);

    const res = await fetch(`${server.url}/api/v1/agents/${agent.id}/invoke`, invokeRequest(alice.token));
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('data: x');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // Loopback buffers hold a few MB per socket; without the pause the gateway reads it all at once.
    expect(written).toBeLessThan(total / 2);
    await reader.cancel();
  });

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
    const up = await upstream((_req, res) => {
      res.on('close', () => upstreamClosed());
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"t":"first"}\n\n'); // and never ends
    });
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
    const server = await listen(h);
    servers.push(server);

    const controller = new AbortController();
    const res = await fetch(`${server.url}/api/v1/agents/${agent.id}/invoke`, {
      ...invokeRequest(alice.token),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('first');
    controller.abort();
    await expect(closed).resolves.toBeUndefined();
  });

  it('aborts the upstream request when the client disconnects before the upstream answers', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
    const up = await upstream((_req, res) => {
      res.on('close', () => upstreamClosed()); // never answers
    });
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
    const server = await listen(h);
    servers.push(server);

    const controller = new AbortController();
    const pending = fetch(`${server.url}/api/v1/agents/${agent.id}/invoke`, {
      ...invokeRequest(alice.token),
      signal: controller.signal,
    });
    await vi.waitFor(() => expect(up.requests).toHaveLength(1));
    controller.abort();
    await expect(pending).rejects.toThrow();
    await expect(closed).resolves.toBeUndefined();
  });
});
