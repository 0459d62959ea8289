import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { startMcpServer } from '@agentgw/testkit';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { SuiteContext } from './suite.js';

const REDIRECT = 'http://127.0.0.1:53682/callback';

/** The MCP app's OAuth side, kept in memory; the browser step is the suite's. */
class AppClient implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata = {
    client_name: 'e2e MCP app',
    redirect_uris: [REDIRECT],
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

/** A browser with a cookie jar: follows the authorization URL, signs in with the console cookie, approves, answers the code. */
async function approveInBrowser(
  baseUrl: string,
  authorizationUrl: URL,
  user: { email: string; password: string },
): Promise<string> {
  const jar = new Map<string, string>();
  const go = async (url: string, init: RequestInit = {}) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(new URL(url, baseUrl), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie },
    });
    for (const line of res.headers.getSetCookie()) {
      const [name, ...value] = line.split(';')[0]!.split('=');
      jar.set(name!.trim(), value.join('='));
    }
    return res;
  };
  const started = await go(authorizationUrl.href);
  expect(started.status).toBe(303);
  const uid = started.headers.get('location')!.split('/').pop()!;
  // What a browser sends from the console's own page (the router passes Host without the port, so Origin alone would not match).
  const json = { 'content-type': 'application/json', origin: baseUrl, 'sec-fetch-site': 'same-origin' };
  expect(
    (
      await go('/api/v1/auth/login', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ ...user, session: 'cookie' }),
      })
    ).status,
  ).toBe(200);
  const answer = await go(`/api/v1/oauth/interactions/${uid}`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ decision: 'approve' }),
  });
  expect(answer.status).toBe(200);
  let next = ((await answer.json()) as { redirectTo: string }).redirectTo;
  for (let hop = 0; hop < 5; hop++) {
    const location = (await go(next)).headers.get('location');
    expect(location).not.toBeNull();
    if (location!.startsWith(REDIRECT)) return new URL(location!).searchParams.get('code')!;
    next = location!;
  }
  throw new Error('the authorization never reached the redirect URI');
}

/**
 * Issue 23 from outside, through the target's base URL only (the router on the distributed
 * target, so discovery, registration, consent, token and MCP calls may each land on another
 * replica): the SDK 1.x client with only the unified endpoint's URL, tools as the user, and a
 * revoked client refused.
 */
export function describeOAuthClientsSuite(ctx: () => SuiteContext): void {
  describe('MCP clients sign in with OAuth (issue 23)', () => {
    it('the SDK client discovers, registers, gets the user through sign-in and consent, calls tools as that user, and is refused once revoked', async () => {
      const c = ctx();
      const endpoint = new URL(`${c.target.baseUrl}/api/v1/mcp/mcp`);
      const user = { email: `oauth-e2e-${Date.now()}@example.com`, password: 'oauth-e2e-password-1' };
      const created = await c.api.must(201, 'POST', '/api/v1/admin/users', {
        token: c.adminToken,
        body: { ...user, name: 'oauth e2e' },
      });
      const upstream = await startMcpServer({
        name: 'oauth-e2e',
        tools: [{ name: 'o_echo', inputSchema: { n: z.string() }, handler: (args) => `echo:${String(args.n)}` }],
      });
      const provider = await c.api.must(201, 'POST', '/api/v1/admin/tool-providers', {
        token: c.adminToken,
        body: { name: `oauth-e2e-${Date.now()}`, pattern: 'o_*', endpoint: upstream.url },
      });
      const providerId = provider.provider.id as string;
      try {
        await c.api.must(201, 'POST', '/api/v1/admin/provider-access', {
          token: c.adminToken,
          body: { subjectType: 'user', subjectId: created.user.id, providerId, action: 'allow', toolPattern: 'o_echo' },
        });

        const app = new AppClient();
        const first = await new Client({ name: 'e2e-app', version: '1.0.0' })
          .connect(new StreamableHTTPClientTransport(endpoint, { authProvider: app }))
          .catch((err: unknown) => err);
        expect(first, String(first)).toBeInstanceOf(UnauthorizedError);
        const code = await approveInBrowser(c.target.baseUrl, app.authorizationUrl!, user);
        await new StreamableHTTPClientTransport(endpoint, { authProvider: app }).finishAuth(code);
        const client = new Client({ name: 'e2e-app', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: app }));
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['o_echo']);
        expect(await client.callTool({ name: 'o_echo', arguments: { n: 'oauth' } })).toMatchObject({
          content: [{ type: 'text', text: 'echo:oauth' }],
        });
        expect(JSON.stringify(upstream.requests)).not.toContain(app.saved!.access_token);
        await client.close();

        const login = await c.api.login(user.email, user.password);
        const listed = await c.api.must(200, 'GET', '/api/v1/oauth/connections', { token: login.token });
        expect(listed.connections).toHaveLength(1);
        await c.api.must(200, 'DELETE', `/api/v1/oauth/connections/${listed.connections[0].grantId as string}`, {
          token: login.token,
        });
        const refused = await fetch(endpoint, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${app.saved!.access_token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        expect(refused.status).toBe(401);
        c.summary.push(
          `${c.target.name}: MCP client OAuth — SDK 1.x registered, consented, listed [o_echo] and called it as the user; revoked → 401`,
        );
      } finally {
        await c.api.call('DELETE', `/api/v1/admin/tool-providers/${providerId}`, { token: c.adminToken });
        await upstream.close();
      }
    });
  });
}
