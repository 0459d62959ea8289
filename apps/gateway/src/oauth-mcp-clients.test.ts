import type { Host, RunningServer } from '@agentgw/service-kit';
import { serve } from '@agentgw/service-kit';
import { adminApiService } from '@agentgw/admin-api';
import { createTestDeps, replicaDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { createUser, freePort, tokenFor, type McpFixture, type TestUser } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGatewayHost } from './all-in-one.js';
import { TestBrowser } from './oauth-test-browser.js';
import {
  exchangeCode,
  firstConnectionRefused,
  listsAndCallsEcho,
  listToolsWith,
  offerEcho,
  pkcePair,
  REDIRECT,
  registerClient,
  SDK_1,
  SDK_2,
  startToolsUpstream,
  TestOAuthClient,
  type McpSdk,
} from './oauth-test-clients.js';

// The MCP authorization spec end to end against the all-in-one on a real port: the official SDK
// clients (1.x and 2.x) with their own OAuthClientProvider, given only the unified endpoint's URL.

let deps: TestDeps;
let host: Host;
let server: RunningServer;
let base: string;
let upstream: McpFixture;
let user: TestUser;
let adminToken: string;
const endpoint = () => new URL(`${base}/api/v1/mcp/mcp`);

/** The SDK 1.x app's client: it registers for the refresh token grant too. */
const sdk1Client = () =>
  new TestOAuthClient('SDK test client', {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });

/** A browser: follows the authorization URL, signs in on the console's API, approves, and answers the parameters the redirect URI gets. */
async function browserApproves(
  authorizationUrl: URL,
  as: TestUser,
  clientName = 'SDK test client',
  resource = `${base}/api/v1/mcp/mcp`,
): Promise<URLSearchParams> {
  const browser = new TestBrowser();
  const uid = await browser.openAuthorization(authorizationUrl.href);
  await browser.signIn(base, as);
  const view = await browser.go(`${base}/api/v1/oauth/interactions/${uid}`);
  expect(view.status).toBe(200);
  expect(await view.json()).toMatchObject({ client: { name: clientName }, resource, scopes: ['mcp'] });
  return browser.approve(base, uid, REDIRECT);
}

/** An SDK client's sign-in as the user: refused without a token, the consent in the browser, the code handed to the SDK. */
async function signsIn(sdk: McpSdk, provider: TestOAuthClient, name: string): Promise<void> {
  const authorizationUrl = await firstConnectionRefused(sdk, endpoint(), provider, name);
  expect(provider.client?.client_id).toBeTruthy();
  expect(authorizationUrl.searchParams.get('resource')).toBe(endpoint().href);
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
  await sdk.finishAuth(
    endpoint(),
    provider,
    await browserApproves(authorizationUrl, user, provider.clientMetadata.client_name),
  );
}

/** tools/list on an MCP endpoint (the unified one unless a path is given) with a bearer token, by hand. */
const listWith = (token: string, path?: string) => listToolsWith(base, token, path);

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  deps = await createTestDeps({
    env: { EGRESS_POLICY: 'allow-private', GATEWAY_PUBLIC_URL: base, OAUTH_ACCESS_TOKEN_TTL_SECONDS: '5' },
  });
  host = await createGatewayHost(deps);
  await host.start();
  server = await serve(host.app, { port, hostname: '127.0.0.1', deps: { close: async () => {} }, logger: deps.logger });
  upstream = await startToolsUpstream();
  adminToken = await tokenFor(
    deps,
    await createUser(deps, { email: `oauth-admin-${Date.now()}@example.com`, roles: ['admin'] }),
  );
  user = await createUser(deps, { email: `oauth-user-${Date.now()}@example.com` });
  await offerEcho(base, adminToken, upstream, user.id);
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
    const as = (await fetch(`${base}/.well-known/oauth-authorization-server`).then((r) => r.json())) as Record<
      string,
      unknown
    >;
    expect(as).toMatchObject({
      issuer: base,
      code_challenge_methods_supported: ['S256'],
      registration_endpoint: `${base}/oauth/register`,
      client_id_metadata_document_supported: true,
    });
    const refused = await fetch(`${base}/api/v1/mcp/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/api/v1/mcp/mcp", scope="mcp"`,
    );
  });

  it('discovers, registers, signs the user in, calls tools as that user, refreshes, and is refused once revoked', async () => {
    const provider = sdk1Client();
    await signsIn(SDK_1, provider, 'oauth-test');
    const firstTokens = provider.saved!;
    expect(firstTokens.refresh_token).toBeTruthy();

    // Calls as that user: the user's provider-access rules hold (echo only), and the audit row names the client.
    const client = await listsAndCallsEcho(SDK_1, endpoint(), provider, 'oauth-test', 'hi');
    const row = await vi.waitFor(
      async () => {
        const res = await fetch(`${base}/api/v1/audit/logs?user_id=${user.id}`, {
          headers: { authorization: `Bearer ${adminToken}` },
        });
        const entry = ((await res.json()) as { data: Record<string, unknown>[] }).data.find(
          (e) => e.toolName === 'echo',
        );
        if (!entry) throw new Error('no audit row yet');
        return entry;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(row).toMatchObject({
      userId: user.id,
      endUserId: user.id,
      agentId: null,
      oauthClientId: provider.client!.client_id,
      status: 'completed',
    });

    // The access token expires (5 s, the shortest allowed): once the gateway refuses it, the client refreshes and the refresh token rotates.
    await vi.waitFor(
      async () => {
        if ((await listWith(firstTokens.access_token)).status !== 401) throw new Error('not expired yet');
      },
      { timeout: 20_000, interval: 250 },
    );
    expect(await client.callTool({ name: 'echo', arguments: { text: 'again' } })).toMatchObject({
      content: [{ type: 'text', text: 'echo:again' }],
    });
    expect(provider.saved!.access_token).not.toBe(firstTokens.access_token);
    expect(provider.saved!.refresh_token).not.toBe(firstTokens.refresh_token);

    // The upstream never sees the client's tokens (no token passthrough).
    const seen = JSON.stringify(upstream.requests);
    for (const token of [firstTokens.access_token, provider.saved!.access_token]) expect(seen).not.toContain(token);

    // The user revokes the client from their connected clients: its tokens and refresh token are refused.
    const userToken = await tokenFor(deps, user);
    const listed = (await fetch(`${base}/api/v1/oauth/connections`, {
      headers: { authorization: `Bearer ${userToken}` },
    }).then((r) => r.json())) as {
      connections: { grantId: string; clientId: string; resources: string[] }[];
    };
    expect(listed.connections).toEqual([
      expect.objectContaining({ clientId: provider.client!.client_id, resources: [`${base}/api/v1/mcp/mcp`] }),
    ]);
    const revoked = await fetch(`${base}/api/v1/oauth/connections/${listed.connections[0]!.grantId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${userToken}` },
    });
    expect(revoked.status).toBe(200);
    const afterRevoke = await listWith(provider.saved!.access_token);
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refresh = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: provider.saved!.refresh_token!,
        client_id: provider.client!.client_id,
      }),
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
    await client.close().catch(() => undefined);
  });
});

describe('MCP clients sign in with OAuth (SDK 2.x, all-in-one)', () => {
  it('discovers, registers dynamically, signs the user in and calls tools as that user', async () => {
    const provider = new TestOAuthClient('SDK 2 test client');
    await signsIn(SDK_2, provider, 'oauth-test-2');
    await (await listsAndCallsEcho(SDK_2, endpoint(), provider, 'oauth-test-2', 'v2')).close();
  });
});

/** A hand-driven OAuth client for the refusals: one DCR registration, PKCE pairs, authorize and token calls by fetch. */
describe('the authorization server refuses what it must (RFC 6749 errors)', () => {
  let clientId: string;
  const unified = () => `${base}/api/v1/mcp/mcp`;
  const authorizeUrl = (params: Record<string, string>) =>
    `${base}/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, scope: 'mcp', resource: unified(), state: 'st-1', ...params })}`;
  const token = (params: Record<string, string>) =>
    fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, ...params }),
    });
  /** A full consent for `resource`: answers the code and its verifier. */
  const codeFor = async (resource: string) => {
    const { verifier, challenge } = pkcePair();
    const url = new URL(authorizeUrl({ resource, code_challenge: challenge, code_challenge_method: 'S256' }));
    const callback = await browserApproves(url, user, 'Refusals client', resource);
    expect(callback.get('state')).toBe('st-1');
    return { code: callback.get('code')!, verifier };
  };
  const tokensFor = async (resource: string) => {
    const { code, verifier } = await codeFor(resource);
    return exchangeCode(base, { clientId, code, verifier, resource });
  };
  /** Where the authorization endpoint sends the browser (no redirect followed). */
  const authorize = (params: Record<string, string>) => fetch(authorizeUrl(params), { redirect: 'manual' });

  beforeAll(async () => {
    clientId = await registerClient(base, 'Refusals client');
  });

  it('refuses a token issued for another endpoint (audience), and a resource that is no MCP endpoint of the gateway', async () => {
    // The proxy addressed by the provider's name ('tools'): its metadata, and a token issued for it works there only.
    const proxyPath = '/api/v1/mcp-proxy/tools/mcp';
    const proxy = `${base}${proxyPath}`;
    const metadata = await fetch(`${base}/.well-known/oauth-protected-resource${proxyPath}`).then((r) => r.json());
    expect(metadata).toMatchObject({ resource: proxy, resource_name: 'Agent Gateway: tool provider tools' });
    const { access_token } = await tokensFor(proxy);
    const byName = await listWith(access_token, proxyPath);
    expect(byName.status).toBe(200);
    expect(await byName.text()).toContain('"echo"');
    const wrong = await listWith(access_token);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const { challenge } = pkcePair();
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

  it("lets a client revoke its own refresh token (the grant ends), never another client's, by an explicit policy (no default warned about)", async () => {
    // oidc-provider names a default policy it falls back on in a console notice (info) or warning.
    const info = vi.spyOn(console, 'info');
    const warn = vi.spyOn(console, 'warn');
    const other = await registerClient(base, 'Other client');
    const { access_token, refresh_token } = await tokensFor(unified());
    const revoke = (client: string) =>
      fetch(`${base}/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: client, token: refresh_token, token_type_hint: 'refresh_token' }),
      });
    expect((await revoke(other)).status).toBe(200); // RFC 7009: answered alike, but nothing is revoked
    expect((await listWith(access_token)).status).toBe(200);
    expect((await revoke(clientId)).status).toBe(200);
    expect((await listWith(access_token)).status).toBe(401);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token });
    expect(await refreshed.json()).toMatchObject({ error: 'invalid_grant' });
    const defaults = [...info.mock.calls, ...warn.mock.calls]
      .map((call) => String(call[0]))
      .filter((line) => line.includes('default'));
    info.mockRestore();
    warn.mockRestore();
    expect(defaults).toEqual([]);
  });

  it('bounds anonymous registration with RFC 7591 errors and stores nothing refused; a client expires unless it obtains a grant', async () => {
    const clients = async () =>
      (
        await deps.db
          .selectFrom('oauth_models')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('model', '=', 'Client')
          .executeTakeFirstOrThrow()
      ).n;
    const register = (metadata: Record<string, unknown>) =>
      fetch(`${base}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token_endpoint_auth_method: 'none', client_name: 'Bounded', ...metadata }),
      });
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `http://127.0.0.1:${40000 + i}/callback/${i}`);
    const stored = await clients();
    const refused: [Record<string, unknown>, string][] = [
      // The review's 916 KiB client with 3,000 redirect URIs.
      [{ redirect_uris: uris(3000).map((uri) => `${uri}/${'x'.repeat(250)}`) }, 'invalid_client_metadata'],
      [{ redirect_uris: uris(11) }, 'invalid_redirect_uri'],
      [{ redirect_uris: [`${REDIRECT}?${'a'.repeat(2000)}`] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [REDIRECT], client_name: 'n'.repeat(101) }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], client_name: 'Good app\u202Eevil' }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], 'client_name#fr': 'a\nb' }, 'invalid_client_metadata'],
      [
        { redirect_uris: [REDIRECT], contacts: Array.from({ length: 11 }, (_, i) => `c${i}@example.com`) },
        'invalid_client_metadata',
      ],
      [{ redirect_uris: [REDIRECT], client_uri: `https://app.example/${'p'.repeat(2000)}` }, 'invalid_client_metadata'],
    ];
    for (const [metadata, error] of refused) {
      const res = await register(metadata);
      expect(res.status, JSON.stringify(metadata).slice(0, 80)).toBe(400);
      expect(await res.json()).toMatchObject({ error });
    }
    expect(await clients()).toBe(stored);
    // At the bounds: accepted, and kept a day unless it obtains a grant.
    const accepted = await register({ redirect_uris: uris(10), client_name: 'n'.repeat(100) });
    expect(accepted.status).toBe(201);
    const { client_id } = (await accepted.json()) as { client_id: string };
    const expiry = async (id: string) =>
      (
        await deps.db
          .selectFrom('oauth_models')
          .select('expires_at')
          .where('model', '=', 'Client')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).expires_at;
    expect(new Date((await expiry(client_id))!).getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    await codeFor(unified()); // a consent: the suite's client obtains a grant
    expect(await expiry(clientId)).toBeNull();
  });

  it('refuses redirect URIs it does not hold (no redirect: open redirects impossible), but lets a loopback client pick its port', async () => {
    const { challenge } = pkcePair();
    for (const redirect_uri of [
      'https://evil.example/callback',
      'http://127.0.0.1:53682/other',
      'http://127.0.0.1.evil.example:53682/callback',
      'http://localhost:53682/callback',
    ]) {
      const res = await authorize({ redirect_uri, code_challenge: challenge, code_challenge_method: 'S256' });
      expect(res.status, redirect_uri).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    }
    const otherPort = await authorize({
      redirect_uri: 'http://127.0.0.1:40000/callback',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(otherPort.status).toBe(303);
    expect(otherPort.headers.get('location')).toMatch(/^\/connect\//);
  });

  it('requires PKCE with S256: none and plain are refused at the redirect URI, a wrong verifier and a replayed code at the token endpoint', async () => {
    for (const params of [{}, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }] as Record<
      string,
      string
    >[]) {
      const res = await authorize(params);
      const location = new URL(res.headers.get('location')!);
      expect(location.origin + location.pathname).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('state')).toBe('st-1');
    }
    const { code, verifier } = await codeFor(unified());
    const wrong = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: pkcePair().verifier,
      redirect_uri: REDIRECT,
      resource: unified(),
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    const right = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      resource: unified(),
    });
    expect(right.status).toBe(200);
    const { access_token } = (await right.json()) as { access_token: string };
    // A replayed code is refused, and the tokens it bought are revoked with their grant (RFC 6749 section 4.1.2).
    const again = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      resource: unified(),
    });
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
    const { challenge } = pkcePair();
    const browser = new TestBrowser();
    const uid = await browser.openAuthorization(
      authorizeUrl({ code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    await browser.signIn(base, user);
    const answer = await browser.go(`${base}/api/v1/oauth/interactions/${uid}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(answer.status).toBe(200);
    // Another browser (without the resume cookie set by /oauth/authorize) cannot collect the code.
    const resumed = await fetch(new URL(((await answer.json()) as { redirectTo: string }).redirectTo, base), {
      redirect: 'manual',
    });
    expect(resumed.headers.get('location') ?? '').not.toContain('code=');
    expect(resumed.status).toBe(400);
  });

  it("refuses the victim's answer to a sign-in an attacker started (started_elsewhere), even with a remembered consent: the attacker gets no code", async () => {
    await codeFor(unified()); // the victim allowed this public client before: a remembered consent
    const attacker = new TestBrowser();
    const { challenge } = pkcePair(); // the attacker's own PKCE pair
    const uid = await attacker.openAuthorization(
      authorizeUrl({ code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    // The victim, signed in on the console in their own browser (which holds a sign-in of its own), opens the link.
    const victim = new TestBrowser();
    await victim.signIn(base, user);
    await victim.openAuthorization(authorizeUrl({ code_challenge: challenge, code_challenge_method: 'S256' }));
    const view = await victim.go(`${base}/api/v1/oauth/interactions/${uid}`);
    expect(view.status).toBe(403);
    const viewBody = (await view.json()) as Record<string, unknown>;
    expect(viewBody).toMatchObject({ code: 'STARTED_ELSEWHERE' });
    expect(viewBody).not.toHaveProperty('remembered');
    for (const decision of ['approve', 'deny']) {
      const answer = await victim.go(`${base}/api/v1/oauth/interactions/${uid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base },
        body: JSON.stringify({ decision }),
      });
      expect(answer.status).toBe(403);
      expect(await answer.json()).toMatchObject({ code: 'STARTED_ELSEWHERE' });
    }
    // Nor with the victim's login token alone (no browser cookie at all).
    const bearer = await fetch(`${base}/api/v1/oauth/interactions/${uid}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await tokenFor(deps, user)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(bearer.status).toBe(403);
    expect(await bearer.json()).toMatchObject({ code: 'STARTED_ELSEWHERE' });
    // The attacker's browser resumes its request: nobody answered it, so it is asked again, and no code comes.
    const resumed = await attacker.go(`${base}/oauth/authorize/${uid}`);
    expect(resumed.headers.get('location') ?? '').not.toContain('code=');
    expect(resumed.headers.get('location') ?? '').not.toContain(REDIRECT);
  });

  it('refuses a cross-site answer (CSRF) even in the browser that started the sign-in and holds the console cookie', async () => {
    const { challenge } = pkcePair();
    const browser = new TestBrowser();
    const uid = await browser.openAuthorization(
      authorizeUrl({ code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    await browser.signIn(base, user);
    const crossSite: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site', origin: base },
      {},
    ];
    for (const headers of crossSite) {
      const answer = await browser.go(`${base}/api/v1/oauth/interactions/${uid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(await answer.json()).toMatchObject({ code: 'CSRF_REJECTED' });
    }
    // The same browser's own page still answers.
    expect((await browser.approve(base, uid, REDIRECT)).get('code')).toBeTruthy();
  });

  it('shows who asks on the consent screen: the client, where the code goes (origin or this computer), the endpoint and the scopes', async () => {
    const web = await registerClient(base, 'Web client', ['https://app.example/cb']);
    const { challenge } = pkcePair();
    const cases = [
      { client: clientId, redirect_uri: REDIRECT, name: 'Refusals client', redirect: { kind: 'this_computer' } },
      {
        client: web,
        redirect_uri: 'https://app.example/cb',
        name: 'Web client',
        redirect: { kind: 'origin', origin: 'https://app.example' },
      },
    ];
    for (const { client, redirect_uri, name, redirect } of cases) {
      const browser = new TestBrowser();
      const uid = await browser.openAuthorization(
        authorizeUrl({ client_id: client, redirect_uri, code_challenge: challenge, code_challenge_method: 'S256' }),
      );
      await browser.signIn(base, user);
      const view = await browser.go(`${base}/api/v1/oauth/interactions/${uid}`);
      expect(view.status).toBe(200);
      expect(await view.json()).toMatchObject({
        client: { id: client, name },
        redirect,
        resource: unified(),
        scopes: ['mcp'],
      });
    }
  });

  it('writes an identity event for each step an operator must reconstruct: registration, consents, revocations and by whom', async () => {
    const events = async (client: string) =>
      (
        await deps.db
          .selectFrom('identity_events')
          .select(['type', 'actor_id', 'user_id', 'client_id', 'details'])
          .where('client_id', '=', client)
          .orderBy('created_at')
          .execute()
      ).map((e) => ({ ...e, details: e.details }));
    const app = await registerClient(base, 'Audited client');
    const forApp = (params: Record<string, string>) => authorizeUrl({ client_id: app, ...params });
    const signIn = async (decision: 'approve' | 'deny') => {
      const { verifier, challenge } = pkcePair();
      const browser = new TestBrowser();
      const uid = await browser.openAuthorization(forApp({ code_challenge: challenge, code_challenge_method: 'S256' }));
      await browser.signIn(base, user);
      if (decision === 'approve') return { code: (await browser.approve(base, uid, REDIRECT)).get('code')!, verifier };
      const denied = await browser.go(`${base}/api/v1/oauth/interactions/${uid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base },
        body: JSON.stringify({ decision }),
      });
      expect(denied.status).toBe(200);
      return null;
    };
    const tokens = async () => {
      const { code, verifier } = (await signIn('approve'))!;
      return exchangeCode(base, { clientId: app, code, verifier, resource: unified() });
    };
    const grantOf = (accessToken: string) =>
      (JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as { gid: string }).gid;

    const first = await tokens(); // consent given (new), then remembered
    await signIn('deny');
    // Refresh-token reuse: oidc-provider ends the grant.
    const rotated = await token({ client_id: app, grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(rotated.status).toBe(200);
    await token({ client_id: app, grant_type: 'refresh_token', refresh_token: first.refresh_token });
    // The client revokes its own refresh token.
    const second = await tokens();
    await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: app, token: second.refresh_token }),
    });
    // A code redeemed twice: oidc-provider ends the grant it bought.
    const replayed = (await signIn('approve'))!;
    const fourth = await exchangeCode(base, { clientId: app, ...replayed, resource: unified() });
    await token({
      client_id: app,
      grant_type: 'authorization_code',
      code: replayed.code,
      code_verifier: replayed.verifier,
      redirect_uri: REDIRECT,
      resource: unified(),
    });
    // An admin (a user manager) revokes the user's connection on the console.
    const third = await tokens();
    const revoked = await fetch(`${base}/api/v1/oauth/connections/${grantOf(third.access_token)}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(revoked.status).toBe(200);

    const admin = (
      await deps.db.selectFrom('users').select('id').where('email', 'like', 'oauth-admin-%').executeTakeFirstOrThrow()
    ).id;
    const consent = {
      actor_id: user.id,
      user_id: user.id,
      client_id: app,
      details: expect.objectContaining({ resource: unified(), scopes: ['mcp'] }),
    };
    const revokedBy = (by: string, actor: string | null, grant: string) => ({
      type: 'oauth.grant_revoked',
      actor_id: actor,
      user_id: user.id,
      client_id: app,
      details: { grantId: grant, by },
    });
    await vi.waitFor(async () => expect(await events(app)).toHaveLength(10), { timeout: 5_000 });
    const written = await events(app);
    expect(written.filter((e) => e.type !== 'oauth.grant_revoked')).toEqual([
      {
        type: 'oauth.client_registered',
        actor_id: null,
        user_id: null,
        client_id: app,
        details: { clientName: 'Audited client', redirectUris: [REDIRECT], clientAuthentication: 'none' },
      },
      { type: 'oauth.consent_given', ...consent },
      { type: 'oauth.consent_denied', ...consent },
      { type: 'oauth.consent_reused', ...consent },
      { type: 'oauth.consent_reused', ...consent },
      { type: 'oauth.consent_reused', ...consent },
    ]);
    expect(written.filter((e) => e.type === 'oauth.grant_revoked')).toEqual(
      expect.arrayContaining([
        revokedBy('refresh_token_reuse', null, grantOf(first.access_token)),
        revokedBy('client_revocation', null, grantOf(second.access_token)),
        revokedBy('code_replay', null, grantOf(fourth.access_token)),
        revokedBy('user_manager', admin, grantOf(third.access_token)),
      ]),
    );
    expect(JSON.stringify(written)).not.toContain(first.refresh_token);
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
    replicaServer = await serve(replicaHost.app, {
      port,
      hostname: '127.0.0.1',
      deps: { close: async () => {} },
      logger: deps.logger,
    });
  });
  afterAll(async () => {
    await replicaServer?.shutdown();
    await replicaHost?.stop({ deadlineMs: 5_000 });
    await replica?.close();
  });

  it('registers and authorizes on one replica, signs in, consents and exchanges the code on another; the token works and refreshes on the first', async () => {
    // Both replicas stand behind one address to the browser: one cookie jar for both.
    const browser = new TestBrowser(() => 'the gateway');
    const clientId = await registerClient(base, 'Replicas client');
    const { verifier, challenge } = pkcePair();
    const params = {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'mcp',
      resource: `${base}/api/v1/mcp/mcp`,
      state: 'st-r',
    };
    const uid = await browser.openAuthorization(
      `${base}/oauth/authorize?${new URLSearchParams({ ...params, code_challenge: challenge, code_challenge_method: 'S256' })}`,
    );

    // The second replica: sign-in, consent, the resumed authorization and the token exchange.
    await browser.signIn(replicaBase, user);
    const code = (await browser.approve(replicaBase, uid, REDIRECT)).get('code')!;
    const tokens = await exchangeCode(replicaBase, { clientId, code, verifier, resource: params.resource });

    expect((await listWith(tokens.access_token)).status).toBe(200);
    const refreshed = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: clientId,
        refresh_token: tokens.refresh_token,
      }),
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
    const agentRes = await admin('POST', '/api/v1/admin/agents', {
      name: `desk-agent-${Date.now()}`,
      upstreamUrl: 'http://127.0.0.1:9/agent',
    });
    expect(agentRes.status).toBe(201);
    const agentId = ((await agentRes.json()) as { agent: { id: string } }).agent.id;
    const providers = (await (await admin('GET', '/api/v1/admin/tool-providers')).json()) as {
      providers: { id: string; name: string }[];
    };
    const providerId = providers.providers.find((p) => p.name === 'tools')!.id;
    expect(
      (
        await admin('POST', '/api/v1/admin/provider-access', {
          subjectType: 'agent',
          subjectId: agentId,
          providerId,
          action: 'allow',
          toolPattern: 'secret',
        })
      ).status,
    ).toBe(201);

    const provider = sdk1Client();
    await signsIn(SDK_1, provider, 'oauth-test');
    const names = async () => {
      const client = await SDK_1.connect(endpoint(), provider, 'oauth-test');
      try {
        return (await client.listTools()).tools.map((t) => t.name).sort();
      } finally {
        await client.close();
      }
    };
    expect(await names()).toEqual(['echo']);

    // Refused: an unknown agent, a body with stray fields; then all of the user's clients bound to the agent.
    expect(
      (
        await admin('PUT', '/api/v1/admin/oauth-client-agents', {
          userId: user.id,
          clientId: '*',
          agentId: 'no-such-agent',
        })
      ).status,
    ).toBe(404);
    expect(
      (await admin('PUT', '/api/v1/admin/oauth-client-agents', { userId: user.id, clientId: '*', agentId, extra: 1 }))
        .status,
    ).toBe(400);
    const userToken = await tokenFor(deps, user);
    const asUser = await fetch(`${base}/api/v1/admin/oauth-client-agents`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: user.id, clientId: '*', agentId }),
    });
    expect(asUser.status).toBe(403);
    expect(
      (await admin('PUT', '/api/v1/admin/oauth-client-agents', { userId: user.id, clientId: '*', agentId })).status,
    ).toBe(200);
    expect(await (await admin('GET', `/api/v1/admin/oauth-client-agents?userId=${user.id}`)).json()).toMatchObject({
      bindings: [{ userId: user.id, clientId: '*', agentId }],
    });

    // Now the agent's rules apply (its allow on secret) with the user as end user (their rules still take part, as for any agent session).
    expect(await names()).toEqual(['echo', 'secret']);
    const client = await SDK_1.connect(endpoint(), provider, 'oauth-test');
    expect(await client.callTool({ name: 'secret', arguments: {} })).toMatchObject({
      content: [{ type: 'text', text: 'not for this user' }],
    });
    await client.close();
    const row = await vi.waitFor(
      async () => {
        const res = await admin('GET', `/api/v1/audit/logs?agent_id=${agentId}`);
        const entry = ((await res.json()) as { data: Record<string, unknown>[] }).data.find(
          (e) => e.toolName === 'secret',
        );
        if (!entry) throw new Error('no audit row yet');
        return entry;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(row).toMatchObject({
      agentId,
      userId: user.id,
      endUserId: user.id,
      oauthClientId: provider.client!.client_id,
    });

    expect((await admin('DELETE', `/api/v1/admin/oauth-client-agents?userId=${user.id}&clientId=*`)).status).toBe(200);
    expect(await names()).toEqual(['echo']);
  });
});
