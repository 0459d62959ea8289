import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
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

// An MCP client signing a person in with OAuth, the browser step in Debian's Chromium against
// the console's own sign-in and consent pages: the official SDK client (1.x) given only the
// unified endpoint's URL, then the person's Connected clients page revoking it.
if (!chromiumAvailable) console.warn(`[dashboard e2e] SKIPPED: ${CHROMIUM} is missing.`);

const ADMIN = { email: 'mcp-oauth-admin@example.com', password: 'e2e-mcp-oauth-password' };
const REDIRECT = 'http://127.0.0.1:53682/callback';

describe.skipIf(!chromiumAvailable)('an MCP client signs in through the console', () => {
  let gateway: RunningGateway;
  let fixture: McpFixture;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const app = new AppOAuthClient('Desk Assistant', REDIRECT);
  const endpoint = () => new URL(`${gateway.url}/api/v1/mcp/mcp`);

  beforeAll(async () => {
    fixture = await startMcpServer({
      name: 'desk-tools',
      tools: [{ name: 'echo', description: 'Echoes its text', handler: (args) => `echo: ${JSON.stringify(args)}` }],
    });
    gateway = await startGatewayUnderTest(ADMIN, { publicUrl: '127.0.0.1' });
    const login = await fetch(`${gateway.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const { token: jwt, user } = (await login.json()) as { token: string; user: { id: string } };
    await allowToolProvider(gateway.url, jwt, { name: 'desk-tools', endpoint: fixture.url, userId: user.id });
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await fixture?.close();
  });

  it('signs in on the console, names the client, endpoint and scopes on consent, and the client calls tools', async () => {
    const refused = await new Client({ name: 'desk', version: '1.0.0' })
      .connect(new StreamableHTTPClientTransport(endpoint(), { authProvider: app }))
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UnauthorizedError);

    // The redirect back to the app: the browser lands on the app's loopback address, which the test answers.
    let callback: URL | null = null;
    await browser.context.route(`${REDIRECT}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: '<!doctype html><title>Done</title><p>You may close this window.</p>',
      });
    });
    await page.goto(app.authorizationUrl!.href);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/connect\/[A-Za-z0-9_-]+$/);
    // Not the console's own sign-in: it says an application asks, and offers no new account.
    await page.getByRole('heading', { name: 'Sign in to connect it' }).waitFor();
    expect(await page.getByTestId('mcp-client-notice').textContent()).toContain('An application (an MCP client) asks');
    expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);
    await screenshot(page, 'mcp-client-sign-in-page');
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).last().click();

    await page.getByRole('heading', { name: 'Desk Assistant wants to use the gateway as you' }).waitFor();
    await expect.poll(() => page.locator('.consent-facts').innerText()).toContain(endpoint().href);
    expect(await page.locator('.consent-facts').innerText()).toContain('mcp');
    expect(await page.locator('.consent-facts').innerText()).toContain('A program on this computer');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'mcp-client-consent');
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

  it('shows a sign-in started in another browser as such, and neither offers nor auto-approves the remembered consent', async () => {
    // Someone else's browser (here: a plain request) starts a sign-in for the same app; its link reaches the signed-in person.
    const started = await fetch(app.authorizationUrl!.href, { redirect: 'manual' });
    expect(started.status).toBe(303);
    const link = new URL(started.headers.get('location')!, gateway.url);
    let called = false;
    await browser.context.route(`${REDIRECT}**`, async (route) => {
      called = true;
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Done</title>' });
    });
    await page.goto(link.href);
    await page.getByText('This sign-in was started in another browser').waitFor();
    expect(await page.getByRole('button', { name: 'Allow' }).count()).toBe(0);
    expect(new URL(page.url()).pathname).toBe(link.pathname);
    expect(called).toBe(false);
    await browser.context.unroute(`${REDIRECT}**`);
  });

  it('lists the client under Connected clients and revokes it there', async () => {
    await page.goto(`${gateway.url}/connected-clients`);
    await page.getByRole('heading', { level: 1, name: 'Connected clients' }).waitFor();
    const row = page.getByRole('row', { name: /Desk Assistant/ });
    await row.waitFor();
    expect(await row.innerText()).toContain(endpoint().href);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'mcp-connected-clients');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Revoke Desk Assistant' }).click();
    await page.getByText('No connected clients.').waitFor();

    const after = await fetch(endpoint(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${app.saved!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(401);
  });

  it("shows the sign-in's identity events on the Audit page's Identity section: registration, consent, revocation by the user", async () => {
    await page.goto(`${gateway.url}/audit`);
    await page.getByRole('heading', { level: 2, name: 'Identity' }).waitFor();
    const rows = page.getByTestId('identity-row');
    for (const type of ['oauth.client_registered', 'oauth.consent_given', 'oauth.grant_revoked'])
      await rows.filter({ hasText: type }).first().waitFor();
    const revoked = rows.filter({ hasText: 'oauth.grant_revoked' }).first();
    expect(await revoked.innerText()).toContain('Grant revoked');
    await page.getByLabel('Event', { exact: true }).selectOption('oauth.consent_given');
    await expect
      .poll(async () => (await rows.allInnerTexts()).every((text) => text.includes('Consent given')))
      .toBe(true);
    expect(await rows.count()).toBeGreaterThan(0);
    await page.getByLabel('Event', { exact: true }).selectOption('');
    await rows.filter({ hasText: 'oauth.grant_revoked' }).first().waitFor();
    await page.getByRole('heading', { level: 2, name: 'Identity' }).scrollIntoViewIfNeeded();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'audit-identity');
  });
});
