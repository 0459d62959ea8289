import { createHash, randomBytes } from 'node:crypto';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
  UnauthorizedError as V2UnauthorizedError,
  type OAuthClientInformationMixed as V2ClientInformation,
  type OAuthClientProvider as V2OAuthClientProvider,
  type OAuthTokens as V2Tokens,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Host, RunningServer } from '@agentgw/service-kit';
import { serve } from '@agentgw/service-kit';
import { adminApiService } from '@agentgw/admin-api';
import { createTestDeps, replicaDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { createUser, freePort, startMcpServer, tokenFor, type McpFixture, type TestUser } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { createGatewayHost } from './all-in-one.js';

// The MCP authorization spec end to end against the all-in-one on a real port: the official SDK
// client (1.x) with its own OAuthClientProvider, given only the unified endpoint's URL.

let deps: TestDeps;
let host: Host;
let server: RunningServer;
let base: string;
let upstream: McpFixture;
let user: TestUser;
let adminToken: string;
const REDIRECT = 'http://127.0.0.1:53682/callback';

/** An OAuth client provider as an MCP client app keeps one: in memory, the browser step left to the test. */
class TestOAuthClient implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata = {
    client_name: 'SDK test client',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  clientInformation = () => this.client;
  saveClientInformation = (info: OAuthClientInformationMixed) => void (this.client = info);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}

/** A browser: follows the authorization URL, signs in on the console's API, approves, and answers the parameters the redirect URI gets. */
async function browserApproves(authorizationUrl: URL, as: TestUser, clientName = 'SDK test client', resource = `${base}/api/v1/mcp/mcp`): Promise<URLSearchParams> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const go = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader() } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      jar.set(name!.trim(), value.join('='));
    }
    return res;
  };
  const toConsent = await go(authorizationUrl.href);
  expect(toConsent.status).toBe(303);
  const consentPath = new URL(toConsent.headers.get('location')!, base).pathname;
  expect(consentPath).toMatch(/^\/connect\/[A-Za-z0-9_-]+$/);
  const uid = consentPath.split('/').pop()!;
  const json = { 'content-type': 'application/json', origin: base };
  expect((await go(`${base}/api/v1/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: as.email, password: as.password, session: 'cookie' }) })).status).toBe(200);
  const view = await go(`${base}/api/v1/oauth/interactions/${uid}`);
  expect(view.status).toBe(200);
  expect(await view.json()).toMatchObject({ client: { name: clientName }, resource, scopes: ['mcp'] });
  const answer = await go(`${base}/api/v1/oauth/interactions/${uid}`, { method: 'POST', headers: json, body: JSON.stringify({ decision: 'approve' }) });
  expect(answer.status).toBe(200);
  let next = ((await answer.json()) as { redirectTo: string }).redirectTo;
  for (let hop = 0; hop < 5; hop++) {
    const res = await go(new URL(next, base).href);
    const location = res.headers.get('location');
    expect(location, `hop ${hop} answered ${res.status}`).not.toBeNull();
    if (location!.startsWith(REDIRECT)) return new URL(location!).searchParams;
    next = location!;
  }
  throw new Error('the authorization never reached the redirect URI');
}

/** tools/list on the unified endpoint with a bearer token, by hand. */
const listWith = (token: string) =>
  fetch(`${base}/api/v1/mcp/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

async function connect(provider: TestOAuthClient): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/v1/mcp/mcp`), { authProvider: provider }));
  return client;
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  deps = await createTestDeps({ env: { EGRESS_POLICY: 'allow-private', GATEWAY_PUBLIC_URL: base, OAUTH_ACCESS_TOKEN_TTL_SECONDS: '5' } });
  host = await createGatewayHost(deps);
  await host.start();
  server = await serve(host.app, { port, hostname: '127.0.0.1', deps: { close: async () => {} }, logger: deps.logger });
  upstream = await startMcpServer({
    name: 'tools',
    tools: [
      { name: 'echo', inputSchema: { text: z.string() }, handler: (args) => `echo:${String(args.text)}` },
      { name: 'secret', inputSchema: {}, handler: () => 'not for this user' },
    ],
  });
  const admin = (adminToken = await tokenFor(deps, await createUser(deps, { email: `oauth-admin-${Date.now()}@example.com`, roles: ['admin'] })));
  user = await createUser(deps, { email: `oauth-user-${Date.now()}@example.com` });
  const call = (path: string, body: unknown) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<{ provider: { id: string } }>,
    );
  const provider = await call('/api/v1/admin/tool-providers', { name: 'tools', pattern: '*', endpoint: upstream.url });
  await call('/api/v1/admin/provider-access', { subjectType: 'user', subjectId: user.id, providerId: provider.provider.id, action: 'allow', toolPattern: 'echo' });
}, 180_000);

afterAll(async () => {
  await server?.shutdown();
  await host?.stop({ deadlineMs: 5_000 });
  await upstream?.close();
  await deps?.close();
});

describe('MCP clients sign in with OAuth (SDK 1.x, all-in-one)', () => {
  it('serves the protected-resource metadata and challenges a call without a token', async () => {
    const metadata = await fetch(`${base}/.well-known/oauth-protected-resource/api/v1/mcp/mcp`).then((r) => r.json());
    expect(metadata).toEqual({
      resource: `${base}/api/v1/mcp/mcp`,
      authorization_servers: [base],
      scopes_supported: ['mcp'],
      bearer_methods_supported: ['header'],
      resource_name: 'Agent Gateway: all tools',
    });
    const as = (await fetch(`${base}/.well-known/oauth-authorization-server`).then((r) => r.json())) as Record<string, unknown>;
    expect(as).toMatchObject({ issuer: base, code_challenge_methods_supported: ['S256'], registration_endpoint: `${base}/oauth/register`, client_id_metadata_document_supported: true });
    const refused = await fetch(`${base}/api/v1/mcp/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/api/v1/mcp/mcp", scope="mcp"`);
  });

  it('discovers, registers, signs the user in, calls tools as that user, refreshes, and is refused once revoked', async () => {
    const provider = new TestOAuthClient();
    const first = await connect(provider).catch((err: unknown) => err);
    expect(first, String(first)).toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toBeTruthy();
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(`${base}/api/v1/mcp/mcp`);
    expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    const code = (await browserApproves(provider.authorizationUrl!, user)).get('code')!;
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/v1/mcp/mcp`), { authProvider: provider });
    await transport.finishAuth(code);
    const firstTokens = provider.saved!;
    expect(firstTokens.refresh_token).toBeTruthy();

    // Calls as that user: the user's provider-access rules hold (echo only), and the audit row names the client.
    const client = await connect(provider);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toMatchObject({ content: [{ type: 'text', text: 'echo:hi' }] });
    const row = await vi.waitFor(
      async () => {
        const res = await fetch(`${base}/api/v1/audit/logs?user_id=${user.id}`, { headers: { authorization: `Bearer ${adminToken}` } });
        const entry = ((await res.json()) as { data: Record<string, unknown>[] }).data.find((e) => e.toolName === 'echo');
        if (!entry) throw new Error('no audit row yet');
        return entry;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(row).toMatchObject({ userId: user.id, endUserId: user.id, agentId: null, oauthClientId: provider.client!.client_id, status: 'completed' });

    // The access token expires (5 s, the shortest allowed): once the gateway refuses it, the client refreshes and the refresh token rotates.
    await vi.waitFor(
      async () => {
        if ((await listWith(firstTokens.access_token)).status !== 401) throw new Error('not expired yet');
      },
      { timeout: 20_000, interval: 250 },
    );
    expect(await client.callTool({ name: 'echo', arguments: { text: 'again' } })).toMatchObject({ content: [{ type: 'text', text: 'echo:again' }] });
    expect(provider.saved!.access_token).not.toBe(firstTokens.access_token);
    expect(provider.saved!.refresh_token).not.toBe(firstTokens.refresh_token);

    // The upstream never sees the client's tokens (no token passthrough).
    const seen = JSON.stringify(upstream.requests);
    for (const token of [firstTokens.access_token, provider.saved!.access_token]) expect(seen).not.toContain(token);

    // The user revokes the client from their connected clients: its tokens and refresh token are refused.
    const userToken = await tokenFor(deps, user);
    const listed = (await fetch(`${base}/api/v1/oauth/connections`, { headers: { authorization: `Bearer ${userToken}` } }).then((r) => r.json())) as {
      connections: { grantId: string; clientId: string; resources: string[] }[];
    };
    expect(listed.connections).toEqual([expect.objectContaining({ clientId: provider.client!.client_id, resources: [`${base}/api/v1/mcp/mcp`] })]);
    const revoked = await fetch(`${base}/api/v1/oauth/connections/${listed.connections[0]!.grantId}`, { method: 'DELETE', headers: { authorization: `Bearer ${userToken}` } });
    expect(revoked.status).toBe(200);
    const afterRevoke = await listWith(provider.saved!.access_token);
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refresh = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: provider.saved!.refresh_token!, client_id: provider.client!.client_id }),
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
    await client.close().catch(() => undefined);
  });
});

/** The same client for the 2.x SDK (`@modelcontextprotocol/client`), whose provider interface differs in its stored types. */
class TestOAuthClientV2 implements V2OAuthClientProvider {
  client: V2ClientInformation | undefined;
  saved: V2Tokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata = { client_name: 'SDK 2 test client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
  clientInformation = () => this.client;
  saveClientInformation = (info: V2ClientInformation) => void (this.client = info);
  tokens = () => this.saved;
  saveTokens = (tokens: V2Tokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}

describe('MCP clients sign in with OAuth (SDK 2.x, all-in-one)', () => {
  it('discovers, registers dynamically, signs the user in and calls tools as that user', async () => {
    const provider = new TestOAuthClientV2();
    const endpoint = new URL(`${base}/api/v1/mcp/mcp`);
    const first = await new V2Client({ name: 'oauth-test-2', version: '1.0.0' }).connect(new V2Transport(endpoint, { authProvider: provider })).catch((err: unknown) => err);
    expect(first, String(first)).toBeInstanceOf(V2UnauthorizedError);
    expect(provider.client?.client_id).toBeTruthy();
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(endpoint.href);
    const callback = await browserApproves(provider.authorizationUrl!, user, 'SDK 2 test client');
    await new V2Transport(endpoint, { authProvider: provider }).finishAuth(callback);
    const client = new V2Client({ name: 'oauth-test-2', version: '1.0.0' });
    await client.connect(new V2Transport(endpoint, { authProvider: provider }));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'v2' } })).toMatchObject({ content: [{ type: 'text', text: 'echo:v2' }] });
    await client.close();
  });
});

/** A hand-driven OAuth client for the refusals: one DCR registration, PKCE pairs, authorize and token calls by fetch. */
describe('the authorization server refuses what it must (RFC 6749 errors)', () => {
  let clientId: string;
  const unified = () => `${base}/api/v1/mcp/mcp`;
  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };
  const authorizeUrl = (params: Record<string, string>) =>
    `${base}/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, scope: 'mcp', resource: unified(), state: 'st-1', ...params })}`;
  const token = (params: Record<string, string>) =>
    fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: clientId, ...params }) });
  /** A full consent for `resource`: answers the code and its verifier. */
  const codeFor = async (resource: string) => {
    const { verifier, challenge } = pkce();
    const url = new URL(authorizeUrl({ resource, code_challenge: challenge, code_challenge_method: 'S256' }));
    const callback = await browserApproves(url, user, 'Refusals client', resource);
    expect(callback.get('state')).toBe('st-1');
    return { code: callback.get('code')!, verifier };
  };
  const tokensFor = async (resource: string) => {
    const { code, verifier } = await codeFor(resource);
    const res = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, resource });
    expect(res.status).toBe(200);
    return (await res.json()) as { access_token: string; refresh_token: string };
  };
  /** Where the authorization endpoint sends the browser (no redirect followed). */
  const authorize = (params: Record<string, string>) => fetch(authorizeUrl(params), { redirect: 'manual' });

  beforeAll(async () => {
    const res = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Refusals client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    });
    expect(res.status).toBe(201);
    clientId = ((await res.json()) as { client_id: string }).client_id;
  });

  it('refuses a token issued for another endpoint (audience), and a resource that is no MCP endpoint of the gateway', async () => {
    const proxy = `${base}/api/v1/mcp-proxy/tools/mcp`;
    const { access_token } = await tokensFor(proxy);
    const wrong = await listWith(access_token);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const { challenge } = pkce();
    for (const resource of ['https://elsewhere.example/api/v1/mcp/mcp', `${base}/api/v1/admin/users`]) {
      const res = await authorize({ resource, code_challenge: challenge, code_challenge_method: 'S256' });
      const location = new URL(res.headers.get('location')!);
      expect(location.origin + location.pathname).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe('invalid_target');
      expect(location.searchParams.get('state')).toBe('st-1');
    }
  });

  it('revokes the whole family when a rotated refresh token is used again', async () => {
    const first = await tokensFor(unified());
    const rotated = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(rotated.status).toBe(200);
    const second = (await rotated.json()) as { access_token: string; refresh_token: string };
    expect((await listWith(second.access_token)).status).toBe(200);
    const reused = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });
    const descendant = await token({ grant_type: 'refresh_token', refresh_token: second.refresh_token });
    expect(await descendant.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await listWith(second.access_token)).status).toBe(401);
  });

  it('refuses redirect URIs it does not hold (no redirect: open redirects impossible), but lets a loopback client pick its port', async () => {
    const { challenge } = pkce();
    for (const redirect_uri of ['https://evil.example/callback', 'http://127.0.0.1:53682/other', 'http://127.0.0.1.evil.example:53682/callback', 'http://localhost:53682/callback']) {
      const res = await authorize({ redirect_uri, code_challenge: challenge, code_challenge_method: 'S256' });
      expect(res.status, redirect_uri).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    }
    const otherPort = await authorize({ redirect_uri: 'http://127.0.0.1:40000/callback', code_challenge: challenge, code_challenge_method: 'S256' });
    expect(otherPort.status).toBe(303);
    expect(otherPort.headers.get('location')).toMatch(/^\/connect\//);
  });

  it('requires PKCE with S256: none and plain are refused at the redirect URI, a wrong verifier and a replayed code at the token endpoint', async () => {
    for (const params of [{}, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }] as Record<string, string>[]) {
      const res = await authorize(params);
      const location = new URL(res.headers.get('location')!);
      expect(location.origin + location.pathname).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('state')).toBe('st-1');
    }
    const { code, verifier } = await codeFor(unified());
    const wrong = await token({ grant_type: 'authorization_code', code, code_verifier: pkce().verifier, redirect_uri: REDIRECT, resource: unified() });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    const right = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, resource: unified() });
    expect(right.status).toBe(200);
    const { access_token } = (await right.json()) as { access_token: string };
    // A replayed code is refused, and the tokens it bought are revoked with their grant (RFC 6749 section 4.1.2).
    const again = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, resource: unified() });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await listWith(access_token)).status).toBe(401);
  });

  it('refuses a forged or unknown interaction, and an authorization resumed without its browser cookie', async () => {
    const userToken = await tokenFor(deps, user);
    const forged = await fetch(`${base}/api/v1/oauth/interactions/forged-uid`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(forged.status).toBe(404);
    const { challenge } = pkce();
    const started = await authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    const uid = started.headers.get('location')!.split('/').pop()!;
    const answer = await fetch(`${base}/api/v1/oauth/interactions/${uid}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(answer.status).toBe(200);
    // Another browser (without the interaction cookie set by /oauth/authorize) cannot collect the code.
    const resumed = await fetch(new URL(((await answer.json()) as { redirectTo: string }).redirectTo, base), { redirect: 'manual' });
    expect(resumed.headers.get('location') ?? '').not.toContain('code=');
    expect(resumed.status).toBe(400);
  });
});

describe('any admin-api replica answers any step of the flow', () => {
  let replica: Awaited<ReturnType<typeof replicaDeps>>;
  let replicaHost: TestHost;
  let replicaServer: RunningServer;
  let replicaBase: string;

  beforeAll(async () => {
    replica = await replicaDeps(deps, deps.bus);
    replicaHost = await testHost(adminApiService, replica);
    const port = await freePort();
    replicaBase = `http://127.0.0.1:${port}`;
    replicaServer = await serve(replicaHost.app, { port, hostname: '127.0.0.1', deps: { close: async () => {} }, logger: deps.logger });
  });
  afterAll(async () => {
    await replicaServer?.shutdown();
    await replicaHost?.stop({ deadlineMs: 5_000 });
    await replica?.close();
  });

  it('registers and authorizes on one replica, signs in, consents and exchanges the code on another; the token works and refreshes on the first', async () => {
    const jar = new Map<string, string>();
    const go = async (url: string, init: RequestInit = {}) => {
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie } });
      for (const line of res.headers.getSetCookie()) {
        const [name, ...value] = line.split(';')[0]!.split('=');
        jar.set(name!.trim(), value.join('='));
      }
      return res;
    };
    const registered = await go(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Replicas client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const verifier = randomBytes(32).toString('base64url');
    const params = { client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, scope: 'mcp', resource: `${base}/api/v1/mcp/mcp`, state: 'st-r' };
    const started = await go(`${base}/oauth/authorize?${new URLSearchParams({ ...params, code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' })}`);
    expect(started.status).toBe(303);
    const uid = started.headers.get('location')!.split('/').pop()!;

    // The second replica: sign-in, consent, the resumed authorization and the token exchange.
    const json = { 'content-type': 'application/json', origin: replicaBase };
    expect((await go(`${replicaBase}/api/v1/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: user.email, password: user.password, session: 'cookie' }) })).status).toBe(200);
    const answer = await go(`${replicaBase}/api/v1/oauth/interactions/${uid}`, { method: 'POST', headers: json, body: JSON.stringify({ decision: 'approve' }) });
    expect(answer.status).toBe(200);
    let next = new URL(((await answer.json()) as { redirectTo: string }).redirectTo, replicaBase).href;
    let code: string | null = null;
    for (let hop = 0; hop < 5 && code === null; hop++) {
      const location = (await go(next)).headers.get('location');
      expect(location).not.toBeNull();
      if (location!.startsWith(REDIRECT)) code = new URL(location!).searchParams.get('code');
      else next = new URL(location!, replicaBase).href;
    }
    const exchanged = await fetch(`${replicaBase}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code: code!, code_verifier: verifier, redirect_uri: REDIRECT, resource: params.resource }),
    });
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };

    expect((await listWith(tokens.access_token)).status).toBe(200);
    const refreshed = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens.refresh_token }),
    });
    expect(refreshed.status).toBe(200);
    expect((await listWith(((await refreshed.json()) as { access_token: string }).access_token)).status).toBe(200);
  });
});

describe("an admin binds a user's MCP clients to an agent", () => {
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });

  it("applies the agent's rules with the user as end user while bound, the user's own once unbound; audit rows name agent, user and client", async () => {
    const agentRes = await admin('POST', '/api/v1/admin/agents', { name: `desk-agent-${Date.now()}`, upstreamUrl: 'http://127.0.0.1:9/agent' });
    expect(agentRes.status).toBe(201);
    const agentId = ((await agentRes.json()) as { agent: { id: string } }).agent.id;
    const providers = (await (await admin('GET', '/api/v1/admin/tool-providers')).json()) as { providers: { id: string; name: string }[] };
    const providerId = providers.providers.find((p) => p.name === 'tools')!.id;
    expect((await admin('POST', '/api/v1/admin/provider-access', { subjectType: 'agent', subjectId: agentId, providerId, action: 'allow', toolPattern: 'secret' })).status).toBe(201);

    const provider = new TestOAuthClient();
    expect(await connect(provider).catch((err: unknown) => err)).toBeInstanceOf(UnauthorizedError);
    const code = (await browserApproves(provider.authorizationUrl!, user)).get('code')!;
    await new StreamableHTTPClientTransport(new URL(`${base}/api/v1/mcp/mcp`), { authProvider: provider }).finishAuth(code);
    const names = async () => {
      const client = await connect(provider);
      try {
        return (await client.listTools()).tools.map((t) => t.name).sort();
      } finally {
        await client.close();
      }
    };
    expect(await names()).toEqual(['echo']);

    // Refused: an unknown agent, a body with stray fields; then all of the user's clients bound to the agent.
    expect((await admin('PUT', '/api/v1/admin/oauth-client-agents', { userId: user.id, clientId: '*', agentId: 'no-such-agent' })).status).toBe(404);
    expect((await admin('PUT', '/api/v1/admin/oauth-client-agents', { userId: user.id, clientId: '*', agentId, extra: 1 })).status).toBe(400);
    const userToken = await tokenFor(deps, user);
    const asUser = await fetch(`${base}/api/v1/admin/oauth-client-agents`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: user.id, clientId: '*', agentId }),
    });
    expect(asUser.status).toBe(403);
    expect((await admin('PUT', '/api/v1/admin/oauth-client-agents', { userId: user.id, clientId: '*', agentId })).status).toBe(200);
    expect(await (await admin('GET', `/api/v1/admin/oauth-client-agents?userId=${user.id}`)).json()).toMatchObject({ bindings: [{ userId: user.id, clientId: '*', agentId }] });

    // Now the agent's rules apply (its allow on secret) with the user as end user (their rules still take part, as for any agent session).
    expect(await names()).toEqual(['echo', 'secret']);
    const client = await connect(provider);
    expect(await client.callTool({ name: 'secret', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'not for this user' }] });
    await client.close();
    const row = await vi.waitFor(
      async () => {
        const res = await admin('GET', `/api/v1/audit/logs?agent_id=${agentId}`);
        const entry = ((await res.json()) as { data: Record<string, unknown>[] }).data.find((e) => e.toolName === 'secret');
        if (!entry) throw new Error('no audit row yet');
        return entry;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(row).toMatchObject({ agentId, userId: user.id, endUserId: user.id, oauthClientId: provider.client!.client_id });

    expect((await admin('DELETE', `/api/v1/admin/oauth-client-agents?userId=${user.id}&clientId=*`)).status).toBe(200);
    expect(await names()).toEqual(['echo']);
  });
});
