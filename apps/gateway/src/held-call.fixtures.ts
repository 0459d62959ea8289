import type { ConfirmationRow } from '@agentgw/db';
import type { Host, RunningServer } from '@agentgw/service-kit';
import { serve } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, freePort, startMcpServer, tokenFor, type McpFixture, type TestUser } from '@agentgw/testkit';
import { expect } from 'vitest';
import * as z from 'zod';
import { createGatewayHost } from './all-in-one.js';
import { TestBrowser } from './oauth-test-browser.js';
import { firstConnectionRefused, REDIRECT, TestOAuthClient, type McpSdk } from './oauth-test-clients.js';

// The all-in-one of the confirm-in-the-client suites (issue 34): an upstream whose `drop` counts its
// runs, a user whose `drop` calls need confirmation by the console or their own client, and the
// OAuth sign-in of that user's MCP clients.

/** The gateway under test, its people and the helpers the suites drive it with. */
export interface HeldCallGateway {
  deps: TestDeps;
  base: string;
  user: TestUser;
  adminToken: string;
  userToken: string;
  providerId: string;
  /** How many times the upstream ran `drop`: a held call runs at most once. */
  drops(): number;
  endpoint(): URL;
  /** A POST with a bearer token, sent again once when a kept-alive socket the server had closed resets it (ECONNRESET under a loaded CI). */
  post(path: string, token: string, body?: unknown): Promise<Response>;
  /** The confirmation of the latest held `drop` call, as stored. */
  latestConfirmation(): Promise<ConfirmationRow>;
  /** Waits until a `drop` confirmation newer than `after` is stored and pending (the call is held), without a timed assertion. */
  heldConfirmation(after: Date): Promise<string>;
  /** Signs the user in through `sdk` (consent in a browser): the client's provider holds its tokens. */
  signIn(sdk: McpSdk, name: string): Promise<TestOAuthClient>;
  close(): Promise<void>;
}

/** Starts the all-in-one with GATEWAY_PUBLIC_URL (OAuth on), the `db` upstream and the user's rule: `drop` confirmed on the console or the client. */
export async function startHeldCallGateway(): Promise<HeldCallGateway> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const deps = await createTestDeps({ env: { EGRESS_POLICY: 'allow-private', GATEWAY_PUBLIC_URL: base } });
  const host: Host = await createGatewayHost(deps);
  await host.start();
  const server: RunningServer = await serve(host.app, {
    port,
    hostname: '127.0.0.1',
    deps: { close: async () => {} },
    logger: deps.logger,
  });
  let drops = 0;
  const upstream: McpFixture = await startMcpServer({
    name: 'db',
    tools: [
      { name: 'drop', inputSchema: { table: z.string(), password: z.string() }, handler: () => `dropped ${++drops}` },
    ],
  });
  const post = async (path: string, token: string, body?: unknown): Promise<Response> => {
    const send = () =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    return send().catch((err: unknown) => {
      if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw err;
      return send();
    });
  };
  const admin = await createUser(deps, { email: `cc-admin-${Date.now()}@example.com`, roles: ['admin'] });
  const adminToken = await tokenFor(deps, admin);
  const user = await createUser(deps, { email: `cc-user-${Date.now()}@example.com` });
  const created = await post('/api/v1/admin/tool-providers', adminToken, {
    name: 'db',
    pattern: '*',
    endpoint: upstream.url,
  });
  expect(created.status).toBe(201);
  const providerId = ((await created.json()) as { provider: { id: string } }).provider.id;
  const rule = await post('/api/v1/admin/provider-access', adminToken, {
    subjectType: 'user',
    subjectId: user.id,
    providerId,
    action: 'require_confirmation',
    toolPattern: 'drop',
    confirmCarriers: ['client'],
  });
  expect(rule.status).toBe(201);
  // The console is always a carrier; push stays out when the rule lists only the client.
  expect(((await rule.json()) as { rule: { confirmCarriers: string[] } }).rule.confirmCarriers).toEqual([
    'console',
    'client',
  ]);
  const endpoint = () => new URL(`${base}/api/v1/mcp/mcp`);
  const latestConfirmation = () =>
    deps.db
      .selectFrom('confirmations')
      .selectAll()
      .where('tool_name', '=', 'drop')
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
  return {
    deps,
    base,
    user,
    adminToken,
    userToken: await tokenFor(deps, user),
    providerId,
    drops: () => drops,
    endpoint,
    post,
    latestConfirmation,
    async heldConfirmation(after) {
      for (;;) {
        const row = await latestConfirmation().catch(() => null);
        if (row && row.created_at > after && row.status === 'pending') return row.id;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async signIn(sdk, name) {
      const provider = new TestOAuthClient(name);
      const authorizationUrl = await firstConnectionRefused(sdk, endpoint(), provider, name);
      const browser = new TestBrowser();
      const uid = await browser.openAuthorization(authorizationUrl.href);
      await browser.signIn(base, user);
      await sdk.finishAuth(endpoint(), provider, await browser.approve(base, uid, REDIRECT));
      return provider;
    },
    async close() {
      await server.shutdown();
      await host.stop({ deadlineMs: 5_000 });
      await upstream.close();
      await deps.close();
    },
  };
}
