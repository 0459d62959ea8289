import { startOidcServer, type OidcServer } from '@agentgw/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHROMIUM,
  chromiumAvailable,
  launchBrowser,
  screenshot,
  startGatewayUnderTest,
  type RunningGateway,
} from './harness.js';

// Connecting an account for real: the console, the all-in-one's vault and oidc-provider's own
// login and consent pages, in Debian's Chromium. The console runs on http://localhost:<port>
// (the gateway's public URL here) and the authorization server on 127.0.0.1, so its redirect
// back is cross-site, as with a real provider.
if (!chromiumAvailable) console.warn(`[dashboard e2e] SKIPPED: ${CHROMIUM} is missing.`);

const ADMIN = { email: 'oauth-admin@example.com', password: 'e2e-oauth-admin-password' };
const CLIENT = { clientId: 'agentgw-console-e2e', clientSecret: 'e2e-client-secret-value' };

describe.skipIf(!chromiumAvailable)('OAuth connect in a real browser', () => {
  let gateway: RunningGateway;
  let oidc: OidcServer;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let consoleUrl = '';
  let jwt = '';

  beforeAll(async () => {
    gateway = await startGatewayUnderTest(ADMIN, { publicUrl: 'localhost' });
    consoleUrl = gateway.url.replace('127.0.0.1', 'localhost');
    oidc = await startOidcServer({
      clients: [{ ...CLIENT, redirectUris: [`${consoleUrl}/api/v1/credentials/oauth/acme/callback`] }],
      interactions: 'pages',
    });
    const login = await fetch(`${gateway.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    jwt = ((await login.json()) as { token: string }).token;
    const created = await fetch(`${gateway.url}/api/v1/credential-providers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
      body: JSON.stringify({
        name: 'Acme',
        serviceType: 'acme',
        authType: 'oauth2',
        config: {
          ...CLIENT,
          scopes: ['openid', 'offline_access'],
          issuer: oidc.issuer,
          authorizationParams: { prompt: 'consent' },
        },
      }),
    });
    expect(created.status).toBe(201);
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await oidc?.close();
  });

  it("connects through the provider's login and consent pages, shows the connection, and disconnects it", async () => {
    await page.goto(`${consoleUrl}/credentials?serviceType=acme`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).last().click();
    await page.getByRole('heading', { level: 1, name: 'Connect acme' }).waitFor();

    await page.getByRole('button', { name: 'Connect with OAuth' }).click();
    // oidc-provider's development login page, then its consent page.
    await page.waitForURL((url) => url.href.startsWith(oidc.issuer));
    await page.locator('input[name="login"]').fill('alice');
    await page.locator('input[name="password"]').fill('any-password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();

    // Back through the vault's callback (a same-origin reload brings the console cookie) to the console.
    await page.waitForURL(`${consoleUrl}/credentials?connected=acme`);
    await page.getByText('Connected acme.').waitFor();
    const row = page.getByRole('row').filter({ hasText: 'acme' });
    await row.getByText('Connected', { exact: true }).waitFor();
    await row.getByText('OAuth', { exact: true }).waitFor();
    await screenshot(page, 'credentials-oauth-connected');

    // The vault hands the access token out; the console never shows it.
    const resolved = await fetch(`${gateway.url}/api/v1/credentials/resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ serviceTypes: ['acme'] }),
    });
    const token = ((await resolved.json()) as { credentials: Record<string, string> }).credentials.acme ?? '';
    expect(token.length).toBeGreaterThan(10);
    expect(await page.content()).not.toContain(token);

    // Admins see the connection in the user lookup, without the token.
    await page.getByLabel('User', { exact: true }).selectOption({ label: ADMIN.email });
    await page
      .getByRole('table', { name: "The user's connected services" })
      .getByText('Connected', { exact: true })
      .waitFor();

    await row.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByRole('button', { name: 'Disconnect acme' }).click();
    await page.getByText('You have not connected any service yet.').waitFor();
    expect(await oidc.provider.AccessToken.find(token)).toBeUndefined();
  });
});
