import { randomBytes } from 'node:crypto';
import {
  startOidcServer,
  startProtectedMcpServer,
  startRecordingUpstream,
  type OidcServer,
  type ProtectedMcpServer,
  type RecordingUpstream,
} from '@agentgw/testkit';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Json } from './gateway-api.js';
import { SuiteResources, type SuiteAgent } from './suite-resources.js';
import type { SuiteContext } from './suite.js';
import { OAUTH_FLOW_TTL_MS } from './targets.js';

/** Debian's Chromium, the only browser the e2e drives. */
const CHROMIUM = '/usr/bin/chromium';
/** The service a user connects from the console (invoke injects `X-Credential-e2e_crm`). */
const CRM = 'e2e_crm';
/** The service behind the protected MCP upstream (tool provider `user_oauth`). */
const TOOLS = 'e2e_tools';
const TOOLS_RESOURCE = 'https://tools.e2e.test/mcp';
/** Access tokens live this long: the vault refreshes within 60 s of expiry, so a few seconds after issue. */
const ACCESS_TOKEN_TTL_S = 68;
const REFRESH_MARGIN_MS = 60_000;

export interface ConnectedAccountsOptions {
  /** Two URLs invoke reaches through different replicas (the distributed target's invoke-proxies); default: the base URL twice. */
  invokeBases?: () => [string, string];
}

/** A token as the transcript shows it: its first 6 characters. */
const redact = (value: string | null | undefined): string => (value ? `${value.slice(0, 6)}…` : String(value));

/** A callback URL with its code and state cut to 6 characters, for the transcript. */
function redactUrl(href: string): string {
  const url = new URL(href);
  for (const name of ['code', 'state'])
    if (url.searchParams.has(name)) url.searchParams.set(name, redact(url.searchParams.get(name)));
  return `${url.pathname}${url.search}`.replaceAll('%E2%80%A6', '…');
}

/** A user of the suite: account, console password, JWT. */
interface SuiteUser {
  id: string;
  email: string;
  password: string;
  token: string;
}

/**
 * Issue 22 (connected accounts) from outside, through the target's base URL: a user connects a
 * service in the console (Chromium, oidc-provider's own login and consent pages), invoke injects
 * the token, two replicas race its refresh (one refresh at the provider), the provider revokes it
 * and the console asks to reconnect; two users reach a protected MCP upstream as themselves and a
 * third gets the connect URL; the callback's refusals. Every step prints a transcript line.
 */
export function describeConnectedAccountsSuite(ctx: () => SuiteContext, options: ConnectedAccountsOptions = {}): void {
  describe('connected accounts (issue 22)', () => {
    let c: SuiteContext;
    let res: SuiteResources;
    let consoleOidc: OidcServer;
    let toolsOidc: OidcServer;
    let runtime: RecordingUpstream;
    let upstream: ProtectedMcpServer;
    let browser: Browser;
    let agent: SuiteAgent;
    const users: string[] = [];
    const providers: string[] = [];
    const log = (line: string) => process.stdout.write(`[connected-accounts e2e ${c.target.name}] ${line}\n`);

    const callbackOf = (type: string) => `${c.target.baseUrl}/api/v1/credentials/oauth/${type}/callback`;
    const authUrlOf = (type: string) => `${c.target.baseUrl}/api/v1/credentials/oauth/${type}/auth`;

    /** A user with a console password (deleted at the end). */
    async function newUser(label: string): Promise<SuiteUser> {
      const email = `ca-${label}-${Date.now()}@example.com`;
      const password = `ca-${label}-password-1`;
      const created = await res.admin(201, 'POST', '/api/v1/admin/users', {
        email,
        password,
        name: `connected ${label}`,
      });
      users.push(created.user.id as string);
      return { id: created.user.id as string, email, password, token: (await c.api.login(email, password)).token };
    }

    /** An oauth2 credential provider for `serviceType` at `oidc` (deleted at the end). */
    async function credentialProvider(
      serviceType: string,
      oidc: OidcServer,
      client: { clientId: string; clientSecret: string },
      extra: Record<string, unknown>,
    ): Promise<void> {
      const body = {
        name: `e2e ${serviceType}`,
        serviceType,
        authType: 'oauth2',
        config: { ...client, scopes: ['openid', 'offline_access'], issuer: oidc.issuer, ...extra },
      };
      const created = await res.admin(201, 'POST', '/api/v1/credential-providers', body);
      const provider = created.provider ?? created.credentialProvider;
      providers.push(provider.id as string);
      log(
        `POST /api/v1/credential-providers ${serviceType} (issuer ${oidc.issuer}) → 201, clientSecret answered as ${JSON.stringify(provider.config?.clientSecret)}`,
      );
    }

    beforeAll(async () => {
      c = ctx();
      res = new SuiteResources(c);
      const crmClient = { clientId: 'e2e-crm', clientSecret: randomBytes(16).toString('hex') };
      const toolsClient = { clientId: 'e2e-tools', clientSecret: randomBytes(16).toString('hex') };
      consoleOidc = await startOidcServer({
        clients: [{ ...crmClient, redirectUris: [callbackOf(CRM)] }],
        interactions: 'pages',
        accessTokenTtlSeconds: ACCESS_TOKEN_TTL_S,
      });
      toolsOidc = await startOidcServer({
        clients: [{ ...toolsClient, redirectUris: [callbackOf(TOOLS)] }],
        resource: TOOLS_RESOURCE,
      });
      upstream = await startProtectedMcpServer({
        issuer: toolsOidc.issuer,
        jwksUri: toolsOidc.jwksUri,
        resource: TOOLS_RESOURCE,
      });
      runtime = await startRecordingUpstream();
      await credentialProvider(CRM, consoleOidc, crmClient, { authorizationParams: { prompt: 'consent' } });
      await credentialProvider(TOOLS, toolsOidc, toolsClient, { resource: TOOLS_RESOURCE });
      agent = await res.agent('ca-crm-bot', [], {
        upstreamUrl: `${runtime.url}/run`,
        requiredCredentials: [{ serviceType: CRM }],
      });
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-sync',
        ],
      });
    });

    afterAll(async () => {
      await browser?.close();
      for (const id of users)
        await c.api.delete(`/api/v1/admin/users/${id}`, { token: c.adminToken }).catch(() => undefined);
      for (const id of providers)
        await c.api.delete(`/api/v1/credential-providers/${id}`, { token: c.adminToken }).catch(() => undefined);
      await res?.cleanup();
      await Promise.all([consoleOidc?.close(), toolsOidc?.close(), upstream?.close(), runtime?.close()]);
    });

    /** invoke as `user` through `base`; the transcript line names the credential header the runtime received. */
    async function invoke(
      user: SuiteUser,
      message: string,
      base = c.target.baseUrl,
    ): Promise<{ status: number; body: Json; credential: string | undefined }> {
      const answer = await fetch(`${base}/api/v1/agents/${agent.id}/invoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message }),
        signal: AbortSignal.timeout(30_000),
      });
      const body = (await answer.json()) as Json;
      const seen = runtime.requests.find((r) => (r.body as { message?: string } | undefined)?.message === message);
      const credential = seen?.headers[`x-credential-${CRM}`] as string | undefined;
      const where = base === c.target.baseUrl ? '' : ` (replica ${base})`;
      log(
        `POST /api/v1/agents/:id/invoke "${message}"${where} [Authorization: Bearer ${redact(user.token)}] → ${answer.status}${seen ? `; runtime got X-Credential-${CRM}: ${redact(credential)}` : `; ${JSON.stringify({ code: body.code, missing: body.missing, authUrls: body.authUrls })}`}`,
      );
      return { status: answer.status, body, credential };
    }

    /** The user's credential metadata for `type` as GET /api/v1/credentials lists it. */
    async function credentialOf(user: SuiteUser, type: string): Promise<Json> {
      const listed = await c.api.must(200, 'GET', '/api/v1/credentials', { token: user.token });
      return (listed.credentials as Json[]).find((cred) => cred.serviceType === type);
    }

    /** Sleeps until the user's stored access token is within the vault's refresh margin. */
    async function waitForRefreshWindow(user: SuiteUser): Promise<void> {
      const expiresAt = new Date((await credentialOf(user, CRM)).expiresAt as string).getTime();
      const wait = Math.max(0, expiresAt - REFRESH_MARGIN_MS - Date.now() + 1_000);
      log(
        `access token expires ${new Date(expiresAt).toISOString()}; waiting ${wait} ms until it is within the 60 s refresh margin`,
      );
      await new Promise((resolve) => setTimeout(resolve, wait));
    }

    const refreshes = () => consoleOidc.tokenRequests.filter((t) => t === 'refresh_token').length;

    it('a user connects from the console, invoke injects the token, two racing invokes (one per replica when there are two) refresh it once, and after revocation the console asks to reconnect', async () => {
      const alice = await newUser('alice');
      const page = await browser.newPage();
      try {
        await connectInConsole(page, alice);
        const first = await invoke(alice, 'ca-first');
        expect(first.status, JSON.stringify(first.body)).toBe(200);
        expect(await consoleOidc.provider.AccessToken.find(first.credential ?? '')).toMatchObject({
          accountId: 'alice',
        });

        await waitForRefreshWindow(alice);
        const before = refreshes();
        const [a, b] = options.invokeBases?.() ?? [c.target.baseUrl, c.target.baseUrl];
        const raced = await Promise.all([invoke(alice, 'ca-race-1', a), invoke(alice, 'ca-race-2', b)]);
        log(
          `provider token endpoint: ${refreshes() - before} refresh_token grant(s) during the race (${consoleOidc.tokenRequests.join(', ')})`,
        );
        expect(raced.map((r) => r.status)).toEqual([200, 200]);
        expect(refreshes() - before).toBe(1);
        expect(consoleOidc.tokenRequests).not.toContain('refresh_token:error');
        expect(raced[0].credential).toBeDefined();
        expect(raced[1].credential).toBe(raced[0].credential);
        expect(raced[0].credential).not.toBe(first.credential);
        expect(await consoleOidc.provider.AccessToken.find(raced[0].credential!)).toMatchObject({ accountId: 'alice' });

        await consoleOidc.revokeAccount('alice');
        log('provider: every grant of account alice revoked');
        await waitForRefreshWindow(alice);
        const refused = await invoke(alice, 'ca-after-revoke');
        expect(refused.status).toBe(401);
        expect(refused.body).toMatchObject({
          code: 'CREDENTIALS_REQUIRED',
          missing: [CRM],
          authUrls: { [CRM]: authUrlOf(CRM) },
        });
        expect(await credentialOf(alice, CRM)).toMatchObject({ status: 'needs_reconnect' });
        await page.goto(`${c.target.baseUrl}/credentials`);
        const row = page.getByRole('row').filter({ hasText: CRM });
        await row.getByText('Reconnect needed', { exact: true }).waitFor();
        await row.getByRole('button', { name: `Reconnect ${CRM}` }).waitFor();
        log(`console /credentials: the ${CRM} row reads "Reconnect needed" with a Reconnect button`);
        c.summary.push(
          `${c.target.name}: connected accounts — console connect, X-Credential-${CRM} injected, one refresh for two racing invokes, revoked → CREDENTIALS_REQUIRED + "Reconnect needed"`,
        );
      } finally {
        await page.close();
      }
    });

    /** Signs in to the console, clicks Connect with OAuth, signs in and consents at the provider, lands back connected. */
    async function connectInConsole(page: Page, user: SuiteUser): Promise<void> {
      page.on('response', (r) => {
        if (r.url().includes(`/api/v1/credentials/oauth/${CRM}/`))
          log(
            `browser ${r.request().method()} ${redactUrl(r.url())} → ${r.status()}${r.headers().location ? ` Location: ${redactUrl(r.headers().location!).slice(0, 120)}` : ''}`,
          );
      });
      await page.goto(`${c.target.baseUrl}/credentials?serviceType=${CRM}`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill(user.password);
      await page.getByRole('button', { name: 'Sign in' }).last().click();
      await page.getByRole('heading', { level: 1, name: `Connect ${CRM}` }).waitFor();
      log(`console /credentials?serviceType=${CRM}: signed in as ${user.email}, clicking "Connect with OAuth"`);
      await page.getByRole('button', { name: 'Connect with OAuth' }).click();
      await page.waitForURL((url) => url.href.startsWith(consoleOidc.issuer));
      await page.locator('input[name="login"]').fill('alice');
      await page.locator('input[name="password"]').fill('any-password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      log('provider: signed in as alice and consented');
      await page.waitForURL(`${c.target.baseUrl}/credentials?connected=${CRM}`);
      await page.getByText(`Connected ${CRM}.`).waitFor();
      await page.getByRole('row').filter({ hasText: CRM }).getByText('Connected', { exact: true }).waitFor();
      log(`console landed on /credentials?connected=${CRM}: the row reads "Connected"`);
    }

    /** Connects `user` to the tools service over HTTP: /auth, the provider as `account` (no page), the callback as the user. */
    async function connectTools(user: SuiteUser, account: string): Promise<URL> {
      const callback = await startToolsFlow(user, account);
      const done = await callbackAs(user, callback);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      return callback;
    }

    /** /auth as the user, then the provider's redirects as `account`: the callback URL (not yet followed). */
    async function startToolsFlow(user: SuiteUser, account: string): Promise<URL> {
      const started = await c.api.must(200, 'GET', `/api/v1/credentials/oauth/${TOOLS}/auth`, { token: user.token });
      return toolsOidc.authorize(`${started.authUrl as string}&login_hint=${account}`, callbackOf(TOOLS));
    }

    /** GETs a callback URL (rebased on the target) as `user`, JSON answer. */
    async function callbackAs(user: SuiteUser, callback: URL, label = ''): Promise<{ status: number; body: Json }> {
      const answer = await c.api.get(`${callback.pathname}${callback.search}`, {
        token: user.token,
        headers: { accept: 'application/json' },
      });
      log(
        `${label}GET ${redactUrl(callback.href)} as ${user.email} → ${answer.status}${answer.body?.code ? ` ${answer.body.code as string}` : ''}`,
      );
      return answer;
    }

    it('two users reach the protected MCP upstream as themselves through the unified endpoint; a third gets the connect URL, audited as refused', async () => {
      const providerId = await res.provider({
        name: `ca-tools-${Date.now()}`,
        pattern: 'whoami',
        endpoint: upstream.url,
        authType: 'user_oauth',
        credentialServiceType: TOOLS,
      });
      const [bob, carol, dave] = [await newUser('bob'), await newUser('carol'), await newUser('dave')];
      for (const u of [bob, carol, dave])
        await res.admin(201, 'POST', '/api/v1/admin/provider-access', {
          subjectType: 'user',
          subjectId: u.id,
          providerId,
          action: 'allow',
          toolPattern: '*',
        });
      await connectTools(bob, 'bob');
      await connectTools(carol, 'carol');

      const whoami = async (u: SuiteUser) => {
        const answer = await c.api.post('/api/v1/mcp/mcp', {
          token: u.token,
          headers: { accept: 'application/json, text/event-stream' },
          body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
        });
        const text = answer.body?.result?.content?.[0]?.text as string | undefined;
        log(
          `POST /api/v1/mcp/mcp tools/call whoami [Authorization: Bearer ${redact(u.token)}] → ${answer.status} ${text ?? JSON.stringify(answer.body?.error?.data ?? answer.body)}`,
        );
        return answer;
      };
      expect((await whoami(bob)).body.result.content[0].text).toBe('you are bob');
      expect((await whoami(carol)).body.result.content[0].text).toBe('you are carol');
      log(`protected upstream's own log of verified subjects: ${JSON.stringify(upstream.identities)}`);
      expect(upstream.identities).toEqual(['bob', 'carol']);

      const refused = await whoami(dave);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: -32003,
        data: { code: 'CREDENTIALS_REQUIRED', missing: [TOOLS], authUrl: authUrlOf(TOOLS) },
      });
      expect(upstream.identities).toEqual(['bob', 'carol']);
      const auditId = refused.body.error.data.auditId as string;
      const record = (
        await vi.waitFor(() => c.api.must(200, 'GET', `/api/v1/audit/logs/${auditId}`, { token: c.adminToken }), {
          timeout: 15_000,
          interval: 200,
        })
      ).data;
      log(`GET /api/v1/audit/logs/${auditId} → status ${record.status as string}, error "${record.error as string}"`);
      expect(record).toMatchObject({ status: 'rejected', error: expect.stringContaining(`Connect ${TOOLS} first`) });
      c.summary.push(
        `${c.target.name}: connected accounts — protected MCP upstream saw ${JSON.stringify(upstream.identities)}; an unconnected user got the connect URL (audited rejected)`,
      );
    });

    it('refuses a forged, a reused and an expired state, a callback of another user, a spliced code and a wrong iss, never with a 500', async () => {
      const [erin, frank] = [await newUser('erin'), await newUser('frank')];
      const expiring = await startToolsFlow(erin, 'erin');
      const startedAt = Date.now();
      const refusals: [string, number, string][] = [];
      const expectRefused = async (what: string, user: SuiteUser, callback: URL, status: number, code: string) => {
        const answer = await callbackAs(user, callback, `${what}: `);
        refusals.push([what, answer.status, answer.body?.code as string]);
        expect([answer.status, answer.body?.code], what).toEqual([status, code]);
      };

      const forged = await startToolsFlow(erin, 'erin');
      forged.searchParams.set('state', randomBytes(32).toString('base64url'));
      await expectRefused('forged state', erin, forged, 400, 'OAUTH_STATE_INVALID');

      const franks = await startToolsFlow(frank, 'frank');
      await expectRefused("another user's callback", erin, franks, 403, 'OAUTH_USER_MISMATCH');
      // A code frank obtained (in a flow of his own) spliced into erin's callback: bound to frank's PKCE verifier.
      const franksOther = await startToolsFlow(frank, 'frank');
      const spliced = await startToolsFlow(erin, 'erin');
      spliced.searchParams.set('code', franksOther.searchParams.get('code')!);
      // The vault exchanges it with erin's verifier; the provider refuses (invalid_grant), which the vault answers as documented.
      await expectRefused("another user's code", erin, spliced, 400, 'OAUTH_CODE_REJECTED');
      expect(await credentialOf(erin, TOOLS)).toBeUndefined();

      const mixedUp = await startToolsFlow(erin, 'erin');
      mixedUp.searchParams.set('iss', 'https://evil.example');
      await expectRefused('wrong iss (mix-up)', erin, mixedUp, 400, 'OAUTH_ISSUER_MISMATCH');

      expect((await callbackAs(frank, franks, 'the owner completes his flow: ')).status).toBe(200);
      await expectRefused('reused state', frank, franks, 400, 'OAUTH_STATE_INVALID');

      const wait = Math.max(0, startedAt + OAUTH_FLOW_TTL_MS + 1_000 - Date.now());
      log(`waiting ${wait} ms for erin's first flow to outlive OAUTH_FLOW_TTL_MS=${OAUTH_FLOW_TTL_MS}`);
      await new Promise((resolve) => setTimeout(resolve, wait));
      await expectRefused('expired state', erin, expiring, 400, 'OAUTH_STATE_INVALID');
      expect(await credentialOf(erin, TOOLS)).toBeUndefined();
      c.summary.push(
        `${c.target.name}: connected accounts — callback refusals ${refusals.map(([w, s, code]) => `${w} ${s} ${code}`).join('; ')}`,
      );
    });
  });
}
