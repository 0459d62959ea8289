import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, startMcpServer, startOidcServer, type McpFixture, type OidcServer } from '@agentgw/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHROMIUM,
  chromiumAvailable,
  launchBrowser,
  screenshot,
  seriousViolations,
  startGatewayUnderTest,
  type RunningGateway,
} from './harness.js';
import { AppOAuthClient, allowToolProvider } from './mcp-oauth-app.js';

// "Continue with" an external OpenID provider on the MCP sign-in, as a person does it in Debian's
// Chromium: the MCP client's authorization request lands on the console's /connect/<uid>, the
// person presses "Continue with Test IdP", signs in on the provider's own pages (oidc-provider on
// loopback), comes back, consents, and the client gets its token; a person with no gateway
// account comes back to the sign-in page with the "not registered" message instead.
if (!chromiumAvailable) console.warn(`[dashboard e2e] SKIPPED: ${CHROMIUM} is missing.`);

const ADMIN = { email: 'external-login-admin@example.com', password: 'e2e-external-login-password' };
const REDIRECT = 'http://127.0.0.1:53684/callback';
const IDP_CLIENT_SECRET = randomBytes(24).toString('base64url');
/** The person's login at the identity provider; its ID token says `<login>@oidc.test`, verified. */
const PERSON = 'dana';

describe.skipIf(!chromiumAvailable)('an MCP client signs a person in through an external identity provider', () => {
  let gateway: RunningGateway;
  let idp: OidcServer;
  let fixture: McpFixture;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const endpoint = () => new URL(`${gateway.url}/api/v1/mcp/mcp`);

  beforeAll(async () => {
    // The provider must know the gateway's redirect URI and the gateway the provider's issuer: the port comes first.
    const port = await freePort();
    idp = await startOidcServer({
      clients: [
        {
          clientId: 'gateway',
          clientSecret: IDP_CLIENT_SECRET,
          redirectUris: [`http://127.0.0.1:${port}/api/v1/oauth/external-login/callback`],
        },
      ],
      interactions: 'pages',
      verifiedEmails: true,
    });
    const externalIssuers = [
      {
        issuer: idp.issuer,
        jwksUri: idp.jwksUri,
        audience: 'gateway-api',
        login: { id: 'test-idp', name: 'Test IdP', clientId: 'gateway', clientSecret: IDP_CLIENT_SECRET },
      },
    ];
    gateway = await startGatewayUnderTest(ADMIN, {
      publicUrl: '127.0.0.1',
      port,
      env: { JWT_EXTERNAL_ISSUERS: JSON.stringify(externalIssuers) },
    });
    fixture = await startMcpServer({
      name: 'desk-tools',
      tools: [{ name: 'echo', description: 'Echoes its text', handler: (args) => `echo: ${JSON.stringify(args)}` }],
    });

    // The person's gateway account (by the email the provider vouches for), allowed the fixture's tools.
    const registered = await fetch(`${gateway.url}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: `${PERSON}@oidc.test`,
        password: randomBytes(18).toString('base64url'),
        name: 'Dana',
      }),
    });
    expect(registered.status).toBe(201);
    const person = ((await registered.json()) as { user: { id: string } }).user;
    const login = await fetch(`${gateway.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const { token: jwt } = (await login.json()) as { token: string };
    await allowToolProvider(gateway.url, jwt, { name: 'desk-tools', endpoint: fixture.url, userId: person.id });

    browser = await launchBrowser();
    // The provider's stock pages import a web font: no network in tests.
    await browser.context.route('https://fonts.googleapis.com/**', (route) => route.abort());
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await fixture?.close();
    await idp?.close();
  });

  /** The MCP client asks for a sign-in and the browser follows its authorization URL to the console's sign-in page: answers the app. */
  async function clientSendsPersonToConsole(): Promise<AppOAuthClient> {
    const app = new AppOAuthClient('Desk Assistant', REDIRECT);
    const refused = await new Client({ name: 'desk', version: '1.0.0' })
      .connect(new StreamableHTTPClientTransport(endpoint(), { authProvider: app }))
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UnauthorizedError);
    await page.goto(app.authorizationUrl!.href);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/connect\/[A-Za-z0-9_-]+$/);
    return app;
  }

  /** The person presses "Continue with Test IdP" and signs in as `login` on the provider's own login and consent pages. */
  async function signInAtProvider(login: string): Promise<void> {
    await page.getByRole('button', { name: 'Continue with Test IdP' }).click();
    await page.waitForURL((url) => url.origin === idp.issuer);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password the test provider takes');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    // The provider asks its own consent for the gateway's `openid email` once per person.
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.origin === gateway.url);
  }

  it('continues at the provider, comes back signed in, consents, and the client gets a token for the person', async () => {
    const app = await clientSendsPersonToConsole();
    const uid = new URL(page.url()).pathname.split('/').pop();
    let callback: URL | null = null;
    await browser.context.route(`${REDIRECT}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: '<!doctype html><title>Done</title><p>You may close this window.</p>',
      });
    });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'external-login-sign-in');

    await signInAtProvider(PERSON);
    await page.getByRole('heading', { name: 'Desk Assistant wants to use the gateway as you' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/connect/${uid}`);
    expect(await page.locator('main').innerText()).toContain(`Signed in as ${PERSON}@oidc.test`);
    await page.getByRole('button', { name: 'Allow' }).click();
    await expect.poll(() => callback !== null, { timeout: 15_000 }).toBe(true);
    expect(callback!.searchParams.get('error')).toBeNull();

    await new StreamableHTTPClientTransport(endpoint(), { authProvider: app }).finishAuth(
      callback!.searchParams.get('code')!,
    );
    const client = new Client({ name: 'desk', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(endpoint(), { authProvider: app }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
    expect(await client.callTool({ name: 'echo', arguments: { text: 'from the desk' } })).toMatchObject({
      content: [{ type: 'text' }],
    });
    await client.close();
  });

  it('brings a person with no gateway account back to the sign-in page with the "not registered" message', async () => {
    // Another person in a fresh browser: no console session and no session at the provider.
    await browser.context.clearCookies();
    await clientSendsPersonToConsole();
    const uid = new URL(page.url()).pathname.split('/').pop();

    await signInAtProvider('stranger');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('no gateway account is linked to that identity');
    const landed = new URL(page.url());
    expect({ path: landed.pathname, loginError: landed.searchParams.get('login_error') }).toEqual({
      path: `/connect/${uid}`,
      loginError: 'not_registered',
    });
    // Still signed out: the gateway's own sign-in form and the way back to the provider are both there.
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByRole('button', { name: 'Continue with Test IdP' }).waitFor();
    expect(
      (
        await fetch(`${gateway.url}/api/v1/auth/session`, {
          headers: {
            cookie: (await browser.context.cookies(gateway.url)).map((c) => `${c.name}=${c.value}`).join('; '),
          },
        })
      ).status,
    ).toBe(401);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'external-login-not-registered');
  });
});
