import { newId } from '@agentgw/core';
import { serve, type Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import {
  createUser,
  freePort,
  PROTECTED_PROMPT,
  PROTECTED_RESOURCE_URI,
  registerCallerPromptAndResource,
  startMcpServer,
  tokenFor,
  type CallerHeaders,
  type McpFixture,
} from '@agentgw/testkit';
import { createRemoteJWKSet, jwtVerify, SignJWT } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';
import { hostJsonApi, type Json } from './host-json-api.js';

const CLIENT = { clientId: 'agentgw', clientSecret: 'exchangeClientSecret42' };
/** An external identity provider whose users sign in to the gateway with its JWTs; the fake STS below is that same issuer. */
const IDP_SECRET = 'external-idp-shared-secret-0123456789abcdef';
const IDP_AUDIENCE = 'agentgw';
/** How the upstream names its caller in every answer (tool, prompt, resource): the bearer it was sent. */
const bearerOf = (headers: CallerHeaders) => `bearer ${String(headers.authorization ?? 'none')}`;
const greeting = { name: PROTECTED_PROMPT, arguments: { name: 'bob' } };
const completion = { ref: { type: 'ref/prompt', name: PROTECTED_PROMPT }, argument: { name: 'name', value: 'al' } };
/** The JSON-RPC methods of a request body the upstream logged (one message or a batch). */
const methodsOf = (body: unknown): unknown[] =>
  (Array.isArray(body) ? body : [body]).map((message) => (message as Json | undefined)?.method);

// Tool providers with authType token_exchange (issue 22, RFC 8693), in the all-in-one: the caller's
// own JWT is exchanged at a loopback token endpoint and only the exchanged token reaches the upstream.
describe('a tool provider reached by token exchange (all-in-one)', () => {
  let deps: TestDeps;
  let host: Host;
  let upstream: McpFixture;
  let tokenEndpoint: Server;
  let tokenUrl = '';
  let stsIssuer = '';
  /** The gateway's public URL, where it listens: its authorization server (the issuer of minted subject tokens, its keys at /oauth/jwks) runs only with one. */
  let publicUrl = '';
  let server: Awaited<ReturnType<typeof serve>>;
  const exchanges: { authorization: string | undefined; params: URLSearchParams }[] = [];
  let adminToken = '';
  let providerId = '';

  const api = hostJsonApi(() => host);
  const unified = (token: string, method: string, params: Json) =>
    api('POST', '/api/v1/mcp/mcp', token, { jsonrpc: '2.0', id: 1, method, params });
  const proxied = (token: string, method: string, params: Json) =>
    api('POST', `/api/v1/mcp-proxy/${providerId}/mcp`, token, { jsonrpc: '2.0', id: 1, method, params });
  const whoami = (token: string) => unified(token, 'tools/call', { name: 'whoami', arguments: {} });
  /** A subject token the STS received, verified as an STS would: against the key set the gateway publishes at /oauth/jwks. */
  const verifiedSubject = (token: string, audience: string) =>
    jwtVerify(token, createRemoteJWKSet(new URL(`${publicUrl}/oauth/jwks`)), {
      issuer: publicUrl,
      audience,
      algorithms: ['ES256'],
    });
  const allow = async (subjectType: 'user' | 'agent', subjectId: string, provider = providerId) =>
    expect(
      (
        await api('POST', '/api/v1/admin/provider-access', adminToken, {
          subjectType,
          subjectId,
          providerId: provider,
          action: 'allow',
          toolPattern: '*',
        })
      ).status,
    ).toBe(201);

  beforeAll(async () => {
    tokenEndpoint = createServer((req, res) => {
      if (req.url?.includes('/.well-known/')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            issuer: stsIssuer,
            authorization_endpoint: `${stsIssuer}/authorize`,
            token_endpoint: tokenUrl,
          }),
        );
        return;
      }
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        exchanges.push({ authorization: req.headers.authorization, params: new URLSearchParams(body) });
        if (req.url === '/refusing/token') {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'invalid_grant', error_description: 'subject not allowed here' }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            access_token: `exchanged-${exchanges.length}`,
            issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
            token_type: 'Bearer',
            expires_in: 3600,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => tokenEndpoint.listen(0, '127.0.0.1', resolve));
    const stsOrigin = `http://127.0.0.1:${(tokenEndpoint.address() as AddressInfo).port}`;
    stsIssuer = `${stsOrigin}/idp`;
    tokenUrl = `${stsOrigin}/token`;
    upstream = await startMcpServer({
      tools: [{ name: 'whoami', handler: (_args, call) => bearerOf(call.headers) }],
      setup: (server) => registerCallerPromptAndResource(server, bearerOf),
    });
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    deps = await createTestDeps({
      env: {
        EGRESS_POLICY: 'allow-private',
        GATEWAY_PUBLIC_URL: publicUrl,
        JWT_EXTERNAL_ISSUERS: JSON.stringify([{ issuer: stsIssuer, audience: IDP_AUDIENCE, secret: IDP_SECRET }]),
      },
    });
    host = await createGatewayHost(deps);
    await host.start();
    server = await serve(host.app, {
      port,
      hostname: '127.0.0.1',
      deps: { close: async () => {} },
      logger: deps.logger,
    });
    adminToken = await tokenFor(
      deps,
      await createUser(deps, { email: `admin-${newId()}@example.com`, roles: ['admin'] }),
    );
    const created = await api('POST', '/api/v1/admin/tool-providers', adminToken, {
      name: 'exchanged',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'token_exchange',
      tokenExchange: { tokenUrl, ...CLIENT, audience: 'tools-api', resource: upstream.url, scope: 'tools.read' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.provider).toMatchObject({
      authType: 'token_exchange',
      hasAuthSecret: true,
      tokenExchange: {
        tokenUrl,
        issuer: null,
        clientId: CLIENT.clientId,
        audience: 'tools-api',
        resource: upstream.url,
        scope: 'tools.read',
      },
    });
    expect(JSON.stringify(created.body)).not.toContain(CLIENT.clientSecret);
    providerId = created.body.provider.id as string;
  });
  afterAll(async () => {
    await server?.shutdown();
    await host?.stop({ deadlineMs: 1_000 });
    await upstream?.close();
    await new Promise((resolve) => tokenEndpoint?.close(resolve));
    await deps?.close();
  });

  it("exchanges a subject token minted for the STS, never the caller's login JWT, and sends only the exchanged token upstream; a second call reuses it", async () => {
    const alice = await createUser(deps, { email: `${newId()}@example.com`, roles: [] });
    const aliceToken = await tokenFor(deps, alice);
    await allow('user', alice.id);

    const first = await whoami(aliceToken);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.result.content[0].text).toBe('bearer Bearer exchanged-1');
    expect(exchanges).toHaveLength(1);
    const [exchange] = exchanges;
    expect(exchange?.authorization).toBe(
      `Basic ${Buffer.from(`${CLIENT.clientId}:${CLIENT.clientSecret}`).toString('base64')}`,
    );
    const params = Object.fromEntries(exchange?.params ?? []);
    expect(params).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: expect.any(String),
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      audience: 'tools-api',
      resource: upstream.url,
      scope: 'tools.read',
    });
    // The STS got a JWT minted for it alone, signed with the key published at /oauth/jwks, never alice's login JWT.
    expect(JSON.stringify(exchanges)).not.toContain(aliceToken);
    const subject = await verifiedSubject(params.subject_token!, tokenUrl);
    expect(subject.protectedHeader).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    expect(subject.payload).toMatchObject({ iss: publicUrl, sub: alice.id, aud: tokenUrl, act: { sub: publicUrl } });
    expect(subject.payload.exp! - subject.payload.iat!).toBeLessThanOrEqual(300);
    // It signs in nowhere on the gateway.
    expect((await whoami(params.subject_token!)).status).toBe(401);

    const second = await whoami(aliceToken);
    expect(second.body.result.content[0].text).toBe('bearer Bearer exchanged-1');
    expect(exchanges).toHaveLength(1);
    expect(JSON.stringify(upstream.requests.map((r) => r.headers))).not.toContain(aliceToken);
  });

  it('sends prompts/get, resources/read, the lists and completion/complete upstream with only the exchanged token, on both endpoints', async () => {
    const erin = await createUser(deps, { email: `${newId()}@example.com`, roles: [] });
    const erinToken = await tokenFor(deps, erin);
    await allow('user', erin.id);
    const before = { requests: upstream.requests.length, exchanges: exchanges.length };
    const exchanged = `Bearer exchanged-${before.exchanges + 1}`;

    for (const send of [unified, proxied]) {
      const prompt = await send(erinToken, 'prompts/get', greeting);
      expect(prompt.status, JSON.stringify(prompt.body)).toBe(200);
      expect(prompt.body.result.messages[0].content.text).toBe(`bearer ${exchanged} greets bob`);
      expect(
        (await send(erinToken, 'resources/read', { uri: PROTECTED_RESOURCE_URI })).body.result.contents[0].text,
      ).toBe(`you are bearer ${exchanged}`);
      expect((await send(erinToken, 'resources/list', {})).body.result.resources).toEqual([
        expect.objectContaining({ uri: PROTECTED_RESOURCE_URI }),
      ]);
      expect((await send(erinToken, 'prompts/list', {})).body.result.prompts).toEqual([
        expect.objectContaining({ name: PROTECTED_PROMPT }),
      ]);
      expect((await send(erinToken, 'completion/complete', completion)).body.result.completion.values).toEqual([
        'alice',
        'albert',
      ]);
    }

    // The upstream's own log: each method reached it, and every request carried the exchanged token, never erin's JWT.
    const seen = upstream.requests.slice(before.requests);
    const methods = seen.flatMap((r) => methodsOf(r.body));
    const sent = (method: string) => methods.filter((m) => m === method).length;
    expect({ get: sent('prompts/get'), read: sent('resources/read'), complete: sent('completion/complete') }).toEqual({
      get: 2,
      read: 2,
      complete: 2,
    });
    // The lists are the user's own, cached per user: fetched at least once each (the proxy forwards its own).
    expect(methods).toEqual(expect.arrayContaining(['resources/list', 'prompts/list']));
    expect(new Set(seen.map((r) => r.headers.authorization))).toEqual(new Set([exchanged]));
    expect(JSON.stringify(seen)).not.toContain(erinToken);
    // The token endpoint saw one RFC 8693 exchange for erin (a subject token minted for her), reused for every request after it.
    const seenByTheSts = exchanges.slice(before.exchanges).map((e) => Object.fromEntries(e.params));
    expect(seenByTheSts).toEqual([
      expect.objectContaining({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: expect.any(String),
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      }),
    ]);
    expect(JSON.stringify(seenByTheSts)).not.toContain(erinToken);
    expect((await verifiedSubject(seenByTheSts[0]!.subject_token!, tokenUrl)).payload.sub).toBe(erin.id);
  });

  it('refuses an agent runtime token a call (audited as rejected) and every other forwarded request with the same reason, sending nothing upstream', async () => {
    const created = await api('POST', '/api/v1/admin/agents', adminToken, {
      name: `bot-${newId().slice(0, 8)}`,
      upstreamUrl: upstream.url,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { agent, runtime_token: runtimeToken } = created.body as { agent: { id: string }; runtime_token: string };
    expect(runtimeToken.startsWith('art_')).toBe(true);
    await allow('agent', agent.id);
    const before = exchanges.length;
    const upstreamCalls = upstream.calls.length;
    const upstreamRequests = upstream.requests.length;

    const refused = await whoami(runtimeToken);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: -32003,
      data: { code: 'SIGN_IN_TOKEN_REQUIRED', reason: expect.stringContaining('runtime token') },
    });
    expect(exchanges).toHaveLength(before);
    expect(upstream.calls).toHaveLength(upstreamCalls);

    // Any other request forwarded as the caller gets the call's refusal (unaudited: no audit id), on both endpoints.
    const { auditId, ...asCall } = refused.body.error.data as Json;
    for (const [send, method, params] of [
      [unified, 'prompts/get', greeting],
      [unified, 'resources/read', { uri: PROTECTED_RESOURCE_URI }],
      [unified, 'completion/complete', completion],
      [proxied, 'prompts/get', greeting],
      [proxied, 'resources/read', { uri: PROTECTED_RESOURCE_URI }],
      [proxied, 'resources/list', {}],
      [proxied, 'prompts/list', {}],
      [proxied, 'completion/complete', completion],
    ] as const) {
      const res = await send(runtimeToken, method, params);
      expect(res.status, `${method}: ${JSON.stringify(res.body)}`).toBe(403);
      expect(res.body.error).toEqual({ ...refused.body.error, data: asCall });
    }
    // The unified lists leave the provider out for a caller acting for no user, rather than asking it without a user's token.
    expect((await unified(runtimeToken, 'resources/list', {})).body.result).toEqual({ resources: [] });
    expect((await unified(runtimeToken, 'prompts/list', {})).body.result).toEqual({ prompts: [] });
    expect(exchanges).toHaveLength(before);
    expect(upstream.requests).toHaveLength(upstreamRequests);

    await expect
      .poll(async () =>
        deps.db
          .selectFrom('audit_logs')
          .select(['status', 'error'])
          .where('id', '=', auditId as string)
          .executeTakeFirst(),
      )
      .toMatchObject({
        status: 'rejected',
        error: expect.stringContaining('sign-in token'),
      });
  });

  it('records a token exchange the STS refuses as a token_exchange.refused identity event with the reason, never a token', async () => {
    const grace = await createUser(deps, { email: `${newId()}@example.com`, roles: [] });
    const graceToken = await tokenFor(deps, grace);
    const created = await api('POST', '/api/v1/admin/tool-providers', adminToken, {
      name: 'exchange-refused',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'token_exchange',
      tokenExchange: { tokenUrl: tokenUrl.replace('/token', '/refusing/token'), ...CLIENT },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const refusingId = created.body.provider.id as string;
    await allow('user', grace.id, refusingId);
    const before = exchanges.length;

    const refused = await api('POST', `/api/v1/mcp-proxy/${refusingId}/mcp`, graceToken, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'whoami', arguments: {} },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error.data).toMatchObject({ code: 'TOKEN_EXCHANGE_REFUSED' });
    // Every refused exchange (the tool list's, then the call's: a refusal is never cached) is one event.
    const subjectTokens = exchanges.slice(before).map((e) => e.params.get('subject_token')!);
    expect(subjectTokens.length).toBeGreaterThanOrEqual(1);

    const events = await deps.db
      .selectFrom('identity_events')
      .selectAll()
      .where('type', '=', 'token_exchange.refused')
      .where('user_id', '=', grace.id)
      .execute();
    expect(events).toHaveLength(subjectTokens.length);
    for (const event of events) {
      expect(event).toMatchObject({ actor_id: null, user_id: grace.id, tenant_id: grace.tenantId, client_id: null });
      expect(event.details).toEqual({
        by: 'gateway',
        providerId: refusingId,
        reason: 'TOKEN_EXCHANGE_REFUSED',
        message: expect.stringContaining('invalid_grant'),
      });
    }
    const stored = JSON.stringify(events);
    for (const secret of [graceToken, ...subjectTokens, CLIENT.clientSecret]) expect(stored).not.toContain(secret);
  });

  it("passes an external identity provider's token on only to that same issuer; any other STS gets a minted one", async () => {
    const email = `${newId()}@example.com`;
    const frank = await createUser(deps, { email, roles: [] });
    const idpToken = await new SignJWT({ email, email_verified: true })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(stsIssuer)
      .setAudience(IDP_AUDIENCE)
      .setSubject(`idp-${frank.id}`)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(IDP_SECRET));
    const sameIssuer = await api('POST', '/api/v1/admin/tool-providers', adminToken, {
      name: 'exchanged-at-the-idp',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'token_exchange',
      tokenExchange: { issuer: stsIssuer, ...CLIENT },
    });
    expect(sameIssuer.status, JSON.stringify(sameIssuer.body)).toBe(201);
    const idpProviderId = sameIssuer.body.provider.id as string;
    await allow('user', frank.id);
    await allow('user', frank.id, idpProviderId);
    const callAt = (id: string) =>
      api('POST', `/api/v1/mcp-proxy/${id}/mcp`, idpToken, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'whoami', arguments: {} },
      });

    const before = exchanges.length;
    expect((await callAt(idpProviderId)).status).toBe(200);
    expect((await callAt(providerId)).status).toBe(200);
    const [atTheIdp, elsewhere] = exchanges.slice(before).map((e) => Object.fromEntries(e.params));
    // The STS that issued the token gets it back (discovery verified its issuer); the other one never sees it.
    expect(atTheIdp?.subject_token).toBe(idpToken);
    expect(elsewhere?.subject_token).not.toBe(idpToken);
    expect((await verifiedSubject(elsewhere!.subject_token!, tokenUrl)).payload.sub).toBe(frank.id);
  });
});
