import { randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Host, RunningServer } from '@agentgw/service-kit';
import { serve } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, freePort, tokenFor, type McpFixture, type TestUser } from '@agentgw/testkit';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';
import { TestBrowser } from './oauth-test-browser.js';
import {
  exchangeCode,
  listToolsWith,
  offerEcho,
  pkcePair,
  REDIRECT,
  registerClient,
  startToolsUpstream,
} from './oauth-test-clients.js';

// "Continue with" an external issuer on the MCP sign-in, end to end: the all-in-one on a real
// port as the MCP clients' authorization server, and a second oidc-provider on loopback as the
// external OpenID provider, with the gateway registered as its client and fixed test people.

const IDP_CLIENT_SECRET = randomBytes(24).toString('base64url');
const CONSOLE_COOKIE = 'agentgw_session';

let deps: TestDeps;
let host: Host;
let server: RunningServer;
let base: string;
let upstream: McpFixture;
let alice: TestUser;
let idp: { issuer: string; server: Server; privateKey: CryptoKey };
/** Who the identity provider signs in next (its login step has no form: the test says who). */
let nextPerson = 'ext-alice';
/** When set, the identity provider's next token answer carries this ID token instead of its own. */
let swapIdToken: string | null = null;
/** When set, the identity provider drops its next token request's connection (a provider gone away mid-login). */
let dropTokenRequest = false;
/** What a browser's navigation asks for (Chromium's Accept): the callback then answers in pages, not JSON. */
const BROWSER_ACCEPT = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8' };

const people = (): Record<string, { email: string; email_verified: boolean }> => ({
  'ext-alice': { email: alice.email.toUpperCase(), email_verified: true },
  'ext-stranger': { email: 'stranger@elsewhere.example', email_verified: true },
});

/** Replaces the ID token of the token endpoint's successful answer (a provider that signs what it should not). */
function replaceIdToken(res: ServerResponse, idToken: string): void {
  const end = res.end.bind(res) as (chunk: unknown) => ServerResponse;
  res.end = ((chunk: unknown) => {
    if (res.statusCode !== 200 || chunk === undefined) return end(chunk);
    const text = JSON.stringify({ ...(JSON.parse(String(chunk)) as object), id_token: idToken });
    res.setHeader('content-length', Buffer.byteLength(text));
    return end(text);
  }) as typeof res.end;
}

async function startIdentityProvider(port: number, gatewayBase: string): Promise<typeof idp> {
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'gateway',
        client_secret: IDP_CLIENT_SECRET,
        redirect_uris: [`${gatewayBase}/api/v1/oauth/external-login/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'idp', alg: 'RS256', use: 'sig' }] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // Email in the ID token (as the big providers do): the gateway reads no userinfo.
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) => {
      const person = people()[id];
      return person ? { accountId: id, claims: () => ({ sub: id, ...person }) } : undefined;
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    cookies: { keys: ['identity-provider-test-cookies'] },
    // Consent at the provider is not what is tested: every sign-in comes with the grant the gateway asks for.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope('openid email');
      await grant.save();
      return grant;
    },
  });
  const httpServer = createServer((req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      provider
        .interactionFinished(req, res, { login: { accountId: nextPerson } }, { mergeWithLastSubmission: false })
        .catch(() => res.writeHead(500).end());
      return;
    }
    if (dropTokenRequest && req.method === 'POST' && req.url === '/token') {
      dropTokenRequest = false;
      req.socket.destroy();
      return;
    }
    if (swapIdToken !== null && req.method === 'POST' && req.url === '/token') {
      replaceIdToken(res, swapIdToken);
      swapIdToken = null;
    }
    void provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => httpServer.listen(port, '127.0.0.1', resolve));
  return { issuer, server: httpServer, privateKey };
}

/** An MCP client asks the gateway to sign someone in: registration, then the browser at the authorization endpoint. Answers the /connect uid. */
async function mcpClientStarts(browser: TestBrowser) {
  const clientId = await registerClient(base, 'External login test client');
  const { verifier, challenge } = pkcePair();
  const authorize = new URL(`${base}/oauth/authorize`);
  const params = {
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'mcp',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${base}/api/v1/mcp/mcp`,
    state: 'client-state',
  };
  for (const [key, value] of Object.entries(params)) authorize.searchParams.set(key, value);
  return { clientId, verifier, uid: await browser.openAuthorization(authorize.href) };
}

/** The browser presses "Continue with Test IdP" on /connect/<uid>: answers the identity provider's authorization URL. */
async function continueWith(browser: TestBrowser, uid: string): Promise<URL> {
  const started = await browser.go(`${base}/api/v1/oauth/interactions/${uid}/external/test-idp`);
  expect(started.status, await started.clone().text()).toBe(302);
  return new URL(started.headers.get('location')!);
}

/** The person signs in at the identity provider, which sends the browser back: answers the gateway callback URL (not yet visited). */
async function signInAtProvider(browser: TestBrowser, authorizationUrl: URL, person = 'ext-alice'): Promise<URL> {
  nextPerson = person;
  let next = authorizationUrl.href;
  for (let hop = 0; hop < 6; hop++) {
    const res = await browser.go(next);
    const location = res.headers.get('location');
    expect(location, `identity provider hop ${hop} answered ${res.status}: ${await res.text()}`).not.toBeNull();
    next = new URL(location!, next).href;
    if (next.startsWith(`${base}/`)) return new URL(next);
  }
  throw new Error('the identity provider never sent the browser back');
}

/** Consent on the console (signed in by the external login's cookie), then the MCP client's code exchanged for tokens. */
async function approveAndExchange(
  browser: TestBrowser,
  flow: { clientId: string; verifier: string; uid: string },
): Promise<string> {
  const view = await browser.go(`${base}/api/v1/oauth/interactions/${flow.uid}`);
  expect(view.status).toBe(200);
  const code = (await browser.approve(base, flow.uid, REDIRECT)).get('code')!;
  return (
    await exchangeCode(base, {
      clientId: flow.clientId,
      code,
      verifier: flow.verifier,
      resource: `${base}/api/v1/mcp/mcp`,
    })
  ).access_token;
}

/** tools/list on the unified endpoint with a bearer token: the tool names (JSON or one SSE message). */
async function toolNames(token: string): Promise<string[]> {
  const res = await listToolsWith(base, token);
  expect(res.status).toBe(200);
  const text = await res.text();
  const json = text.startsWith('{')
    ? text
    : text
        .split('\n')
        .find((line) => line.startsWith('data: '))!
        .slice(6);
  return (JSON.parse(json) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
}

/** A refused callback: the status and code, never a 500, and no console session for anyone. */
async function expectRefused(browser: TestBrowser, callback: URL, status: number, code: string, says: RegExp) {
  const res = await browser.go(callback.href);
  const body = (await res.json()) as { code: string; message: string };
  expect({ status: res.status, code: body.code }).toEqual({ status, code });
  expect(body.message).toMatch(says);
  expect(browser.cookie(base, CONSOLE_COOKIE)).toBeUndefined();
}

/** An ID token as the provider would sign it for this flow, with `claims` changed, signed by `key`. */
const forgedIdToken = (authorizationUrl: URL, key: CryptoKey, claims: Record<string, unknown>) =>
  new SignJWT({
    email: alice.email,
    email_verified: true,
    nonce: authorizationUrl.searchParams.get('nonce'),
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid: 'idp' })
    .setIssuer(idp.issuer)
    .setSubject('ext-alice')
    .setAudience((claims.aud as string | undefined) ?? 'gateway')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key);

beforeAll(async () => {
  const [port, idpPort] = [await freePort(), await freePort()];
  base = `http://127.0.0.1:${port}`;
  const idpIssuer = `http://127.0.0.1:${idpPort}`;
  // A second login whose provider is down (nothing listens on its port): its start fails.
  const goneIssuer = `http://127.0.0.1:${await freePort()}`;
  const externalIssuers = [
    {
      issuer: idpIssuer,
      jwksUri: `${idpIssuer}/jwks`,
      audience: 'gateway-api',
      login: { id: 'test-idp', name: 'Test IdP', clientId: 'gateway', clientSecret: IDP_CLIENT_SECRET },
    },
    {
      issuer: goneIssuer,
      jwksUri: `${goneIssuer}/jwks`,
      audience: 'gateway-api',
      login: { id: 'gone-idp', name: 'Gone IdP', clientId: 'gateway', clientSecret: IDP_CLIENT_SECRET },
    },
  ];
  deps = await createTestDeps({
    env: {
      EGRESS_POLICY: 'allow-private',
      GATEWAY_PUBLIC_URL: base,
      JWT_EXTERNAL_ISSUERS: JSON.stringify(externalIssuers),
    },
  });
  alice = await createUser(deps, { email: `ext-alice-${Date.now()}@example.com` });
  idp = await startIdentityProvider(idpPort, base);
  host = await createGatewayHost(deps);
  await host.start();
  server = await serve(host.app, { port, hostname: '127.0.0.1', deps: { close: async () => {} }, logger: deps.logger });
  upstream = await startToolsUpstream();
  const admin = await tokenFor(
    deps,
    await createUser(deps, { email: `ext-admin-${Date.now()}@example.com`, roles: ['admin'] }),
  );
  await offerEcho(base, admin, upstream, alice.id);
}, 180_000);

afterAll(async () => {
  await server?.shutdown();
  await host?.stop({ deadlineMs: 5_000 });
  await upstream?.close();
  await new Promise((resolve) => idp?.server.close(resolve));
  await deps?.close();
});

describe('continue with an external issuer on the MCP sign-in', () => {
  it('lists the external logins of a pending sign-in without anyone signed in (ids and names only), to its browser only', async () => {
    const browser = new TestBrowser();
    const { uid } = await mcpClientStarts(browser);
    const res = await browser.go(`${base}/api/v1/oauth/interactions/${uid}/logins`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      logins: [
        { id: 'test-idp', name: 'Test IdP' },
        { id: 'gone-idp', name: 'Gone IdP' },
      ],
    });
    expect((await fetch(`${base}/api/v1/oauth/interactions/unknown-uid/logins`)).status).toBe(404);
    // Another browser (no interaction cookie of this sign-in) neither sees them nor starts one.
    const elsewhere = await fetch(`${base}/api/v1/oauth/interactions/${uid}/logins`);
    expect(elsewhere.status).toBe(403);
    expect(await elsewhere.json()).toMatchObject({ code: 'STARTED_ELSEWHERE' });
    const started = await fetch(`${base}/api/v1/oauth/interactions/${uid}/external/test-idp`, { redirect: 'manual' });
    expect(started.status).toBe(403);
    expect((await browser.go(`${base}/api/v1/oauth/interactions/${uid}/external/no-such-login`)).status).toBe(404);
  });

  it('signs the MCP client in as the gateway user the external person maps to, and tools/list works as that user', async () => {
    for (const round of ['by verified email (then linked)', 'by the linked subject']) {
      const browser = new TestBrowser();
      const flow = await mcpClientStarts(browser);
      const authorizationUrl = await continueWith(browser, flow.uid);
      expect(authorizationUrl.origin).toBe(idp.issuer);
      expect(Object.fromEntries(authorizationUrl.searchParams)).toMatchObject({
        client_id: 'gateway',
        response_type: 'code',
        code_challenge_method: 'S256',
        scope: 'openid email',
      });
      const callback = await signInAtProvider(browser, authorizationUrl);
      expect(callback.searchParams.get('iss'), 'RFC 9207 iss on the way back').toBe(idp.issuer);
      const back = await browser.go(callback.href);
      expect(back.status, `${round}: ${await back.clone().text()}`).toBe(302);
      expect(back.headers.get('location')).toBe(`/connect/${flow.uid}`);
      expect(browser.cookie(base, CONSOLE_COOKIE)).toBeTruthy();
      const session = await browser.go(`${base}/api/v1/auth/session`);
      expect(((await session.json()) as { user: { id: string } }).user.id).toBe(alice.id);
      const accessToken = await approveAndExchange(browser, flow);
      expect(decodeJwt(accessToken).sub, round).toBe(alice.id);
      expect(await toolNames(accessToken)).toEqual(['echo']);
    }
    const links = await deps.db
      .selectFrom('external_identities')
      .select(['user_id'])
      .where('issuer', '=', idp.issuer)
      .where('subject', '=', 'ext-alice')
      .execute();
    expect(links).toEqual([{ user_id: alice.id }]);
  });

  it('refuses a forged state, a replayed callback and a callback brought to another browser', async () => {
    const forged = new URL(`${base}/api/v1/oauth/external-login/callback`);
    forged.search = new URLSearchParams({ code: 'anything', state: 'forged-state', iss: idp.issuer }).toString();
    await expectRefused(
      new TestBrowser(),
      forged,
      401,
      'EXTERNAL_LOGIN_REFUSED',
      /unknown, expired or already finished/,
    );

    const victim = new TestBrowser();
    const attacker = new TestBrowser();
    const attackerFlow = await mcpClientStarts(attacker);
    const attackerCallback = await signInAtProvider(attacker, await continueWith(attacker, attackerFlow.uid));
    // Login CSRF: the attacker's finished callback opened in the victim's browser (which started a login of its own).
    await continueWith(victim, (await mcpClientStarts(victim)).uid);
    await expectRefused(victim, attackerCallback, 401, 'EXTERNAL_LOGIN_REFUSED', /started in another browser/);
    // The state was used up by that attempt: the same callback is refused in the attacker's own browser too.
    await expectRefused(
      attacker,
      attackerCallback,
      401,
      'EXTERNAL_LOGIN_REFUSED',
      /unknown, expired or already finished/,
    );
  });

  it("refuses the state of one pending sign-in with another's code", async () => {
    const browser = new TestBrowser();
    const first = await mcpClientStarts(browser);
    const firstCallback = await signInAtProvider(browser, await continueWith(browser, first.uid));
    const second = await mcpClientStarts(browser);
    const secondCallback = await signInAtProvider(browser, await continueWith(browser, second.uid));
    const mixed = new URL(firstCallback);
    mixed.searchParams.set('code', secondCallback.searchParams.get('code')!);
    await expectRefused(browser, mixed, 401, 'EXTERNAL_LOGIN_REFUSED', /token endpoint answered invalid_grant/);
  });

  it('refuses a wrong iss on the way back', async () => {
    const browser = new TestBrowser();
    const callback = await signInAtProvider(browser, await continueWith(browser, (await mcpClientStarts(browser)).uid));
    callback.searchParams.set('iss', 'https://evil.example');
    await expectRefused(browser, callback, 401, 'EXTERNAL_LOGIN_REFUSED', /"iss" \(issuer\)/);
  });

  it('refuses an ID token with another nonce, another audience or a foreign signature', async () => {
    // Another nonce: the browser changed it on the way to the provider, which signs what it was sent.
    const nonceBrowser = new TestBrowser();
    const tampered = await continueWith(nonceBrowser, (await mcpClientStarts(nonceBrowser)).uid);
    tampered.searchParams.set('nonce', 'not-the-gateways-nonce');
    await expectRefused(
      nonceBrowser,
      await signInAtProvider(nonceBrowser, tampered),
      401,
      'EXTERNAL_LOGIN_REFUSED',
      /nonce/,
    );

    const foreignKey = (await generateKeyPair('RS256', { extractable: true })).privateKey;
    const cases = [
      { what: 'another audience', key: idp.privateKey, claims: { aud: 'another-client' }, says: /"aud" \(audience\)/ },
      { what: 'a foreign signature', key: foreignKey, claims: {}, says: /signature does not hold/ },
    ];
    for (const { what, key, claims, says } of cases) {
      const browser = new TestBrowser();
      const authorizationUrl = await continueWith(browser, (await mcpClientStarts(browser)).uid);
      const callback = await signInAtProvider(browser, authorizationUrl);
      swapIdToken = await forgedIdToken(authorizationUrl, key, claims);
      await expectRefused(browser, callback, 401, 'EXTERNAL_LOGIN_REFUSED', says);
      expect(swapIdToken, `${what}: the provider answered the token request`).toBeNull();
    }
  });

  it('refuses a person the gateway has no account for (none is created)', async () => {
    const browser = new TestBrowser();
    const callback = await signInAtProvider(
      browser,
      await continueWith(browser, (await mcpClientStarts(browser)).uid),
      'ext-stranger',
    );
    await expectRefused(browser, callback, 403, 'EXTERNAL_USER_NOT_REGISTERED', /No gateway account is linked/);
    expect(
      await deps.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'stranger@elsewhere.example')
        .executeTakeFirst(),
    ).toBeUndefined();
  });
});

describe("a person's browser is answered in pages, never a JSON error", () => {
  /** The callback as a browser navigates to it: the redirect's target, with no console session set. */
  async function browserLandsOn(browser: TestBrowser, callback: URL): Promise<string | null> {
    const res = await browser.go(callback.href, { headers: BROWSER_ACCEPT });
    expect(res.status, await res.clone().text()).toBe(302);
    expect(browser.cookie(base, CONSOLE_COOKIE)).toBeUndefined();
    return res.headers.get('location');
  }

  it('sends the browser that started the login back to its sign-in page with a reason word', async () => {
    const stranger = new TestBrowser();
    const strangerFlow = await mcpClientStarts(stranger);
    const strangerCallback = await signInAtProvider(
      stranger,
      await continueWith(stranger, strangerFlow.uid),
      'ext-stranger',
    );
    expect(await browserLandsOn(stranger, strangerCallback)).toBe(
      `/connect/${strangerFlow.uid}?login_error=not_registered`,
    );

    const wrongIss = new TestBrowser();
    const wrongIssFlow = await mcpClientStarts(wrongIss);
    const wrongIssCallback = await signInAtProvider(wrongIss, await continueWith(wrongIss, wrongIssFlow.uid));
    wrongIssCallback.searchParams.set('iss', 'https://evil.example');
    expect(await browserLandsOn(wrongIss, wrongIssCallback)).toBe(`/connect/${wrongIssFlow.uid}?login_error=refused`);

    // The person pressed "cancel" at the provider: RFC 6749 error=access_denied with the login's own state.
    const cancels = new TestBrowser();
    const cancelFlow = await mcpClientStarts(cancels);
    const cancelled = new URL(`${base}/api/v1/oauth/external-login/callback`);
    const state = (await continueWith(cancels, cancelFlow.uid)).searchParams.get('state')!;
    cancelled.search = new URLSearchParams({
      error: 'access_denied',
      error_description: '<script>alert(1)</script>',
      state,
      iss: idp.issuer,
    }).toString();
    expect(await browserLandsOn(cancels, cancelled)).toBe(`/connect/${cancelFlow.uid}?login_error=cancelled`);

    const stranded = new TestBrowser();
    const strandedFlow = await mcpClientStarts(stranded);
    const strandedCallback = await signInAtProvider(stranded, await continueWith(stranded, strandedFlow.uid));
    dropTokenRequest = true;
    expect(await browserLandsOn(stranded, strandedCallback)).toBe(
      `/connect/${strandedFlow.uid}?login_error=unavailable`,
    );
    expect(dropTokenRequest, 'the provider saw the token request').toBe(false);
  });

  it('sends a browser whose provider cannot be reached back to its sign-in page; other clients get the JSON error', async () => {
    const browser = new TestBrowser();
    const { uid } = await mcpClientStarts(browser);
    const start = (login: string, headers: Record<string, string>) =>
      browser.go(`${base}/api/v1/oauth/interactions/${uid}/external/${login}`, { headers });
    const gone = await start('gone-idp', BROWSER_ACCEPT);
    expect({ status: gone.status, location: gone.headers.get('location') }).toEqual({
      status: 302,
      location: `/connect/${uid}?login_error=unavailable`,
    });
    const unknown = await start('no-such-login', BROWSER_ACCEPT);
    expect({ status: unknown.status, location: unknown.headers.get('location') }).toEqual({
      status: 302,
      location: `/connect/${uid}?login_error=unavailable`,
    });
    const json = await start('gone-idp', { accept: 'application/json' });
    expect({ status: json.status, code: ((await json.json()) as { code: string }).code }).toEqual({
      status: 502,
      code: 'OAUTH_SERVER_ERROR',
    });
    // An unknown sign-in has nothing to go back to: its error stays the JSON 404, whoever asks.
    expect(
      (
        await browser.go(`${base}/api/v1/oauth/interactions/not-a-sign-in/external/gone-idp`, {
          headers: BROWSER_ACCEPT,
        })
      ).status,
    ).toBe(404);
  });

  it('answers a page with no redirect when the state names no sign-in this browser may go back to', async () => {
    const forged = new URL(`${base}/api/v1/oauth/external-login/callback`);
    const injected = '<script>alert(1)</script>';
    forged.search = new URLSearchParams({
      code: injected,
      state: `forged-${injected}`,
      iss: idp.issuer,
      error_description: injected,
    }).toString();
    const refusedPage = async (browser: TestBrowser, callback: URL) => {
      const res = await browser.go(callback.href, { headers: BROWSER_ACCEPT });
      const body = await res.text();
      expect({
        status: res.status,
        location: res.headers.get('location'),
        type: res.headers.get('content-type'),
      }).toEqual({ status: 401, location: null, type: 'text/html; charset=UTF-8' });
      expect(body).toContain('Sign-in not completed');
      expect(body).not.toContain('script');
      expect(body).not.toContain('/connect/');
      expect(browser.cookie(base, CONSOLE_COOKIE)).toBeUndefined();
    };
    await refusedPage(new TestBrowser(), forged);

    // An attacker's finished callback in the victim's browser names the attacker's sign-in: the victim is not sent there.
    const attacker = new TestBrowser();
    const attackerCallback = await signInAtProvider(
      attacker,
      await continueWith(attacker, (await mcpClientStarts(attacker)).uid),
    );
    const victim = new TestBrowser();
    await continueWith(victim, (await mcpClientStarts(victim)).uid);
    await refusedPage(victim, attackerCallback);

    // A client that refuses HTML (q=0) still gets the JSON answer.
    const json = await new TestBrowser().go(forged.href, { headers: { accept: 'text/html;q=0, application/json' } });
    expect({ status: json.status, code: ((await json.json()) as { code: string }).code }).toEqual({
      status: 401,
      code: 'EXTERNAL_LOGIN_REFUSED',
    });
  });
});
