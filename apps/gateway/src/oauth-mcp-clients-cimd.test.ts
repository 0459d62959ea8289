import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, get as httpsGet, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, startProcess, waitForHealthy, type ManagedProcess, type McpFixture } from '@agentgw/testkit';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  firstConnectionRefused,
  listsAndCallsEcho,
  offerEcho,
  REDIRECT,
  SDK_1,
  SDK_2,
  startToolsUpstream,
  TestOAuthClient,
} from './oauth-test-clients.js';
import { createTestTlsAuthority, type TestTlsAuthority } from './tls-authority.fixtures.js';

// MCP clients identified by a client ID metadata document (MCP authorization 2025-11-25): the
// official SDK clients (1.x and 2.x) given only the unified endpoint's URL and the https URL of
// their document; the gateway (a real `gateway start` process) fetches that document through its
// egress policy, the person signs in and consents in Chromium on the console's pages. The
// documents are served over TLS on loopback by a CA made for this run, which the gateway process
// trusts through NODE_EXTRA_CA_CERTS: no switch in the gateway relaxes the https rule for tests.

const CHROMIUM = '/usr/bin/chromium';
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const ADMIN = { email: 'cimd-admin@example.com', password: 'cimd-test-password-1' };

let dir: string;
let tls: TestTlsAuthority;
let gateway: ManagedProcess;
let base: string;
let upstream: McpFixture;
let browser: Browser;
let documents: DocumentServer;

/** An https server on loopback answering fixed documents by path, recording what it was asked (address and path). */
interface DocumentServer {
  origin: string;
  originV6: string;
  requests: string[];
  serve(path: string, body: string, status?: number): string;
  close(): Promise<void>;
}

async function startDocumentServer(authority: TestTlsAuthority): Promise<DocumentServer> {
  const routes = new Map<string, { body: string; status: number }>();
  const requests: string[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    requests.push(`${req.socket.localAddress} ${req.url}`);
    const route = routes.get(req.url ?? '');
    if (!route) return void res.writeHead(404).end();
    res.writeHead(route.status, { 'content-type': 'application/json' }).end(route.body);
  };
  // The same documents on 127.0.0.1 (allowed by the gateway's egress policy) and ::1 (not allowed).
  const listen = async (host: string) => {
    const server: Server = createServer({ key: authority.key, cert: authority.cert }, handler);
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return server;
  };
  const v4 = await listen('127.0.0.1');
  const v6 = await listen('::1');
  const origin = `https://127.0.0.1:${(v4.address() as AddressInfo).port}`;
  return {
    origin,
    originV6: `https://[::1]:${(v6.address() as AddressInfo).port}`,
    requests,
    serve(path, body, status = 200) {
      routes.set(path, { body, status });
      return `${origin}${path}`;
    },
    async close() {
      await Promise.all([v4, v6].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

/** A client's metadata document, `client_id` being its own URL unless told otherwise. */
const documentFor = (url: string, name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    client_id: url,
    client_name: name,
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    ...extra,
  });

/** The person in Chromium: opens the authorization URL, signs in on the console, checks the client's name on consent, allows; answers the redirect's parameters. */
async function signInAndAllow(authorizationUrl: URL, clientName: string): Promise<URLSearchParams> {
  const context = await browser.newContext();
  try {
    let callback: URL | null = null;
    await context.route(`${REDIRECT}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Done</title>' });
    });
    const page = await context.newPage();
    await page.goto(authorizationUrl.href);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).last().click();
    await page.getByRole('heading', { name: `${clientName} wants to use the gateway as you` }).waitFor();
    await page.getByRole('button', { name: 'Allow' }).click();
    await expect.poll(() => callback !== null, { timeout: 15_000 }).toBe(true);
    return callback!.searchParams;
  } finally {
    await context.close();
  }
}

/** The claims of a JWT access token (already verified by the gateway; read here to name its client). */
const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

/** The SDK client of an app that has a metadata document at `url`: it never registers, its client id is the document's URL. */
const metadataUrlClient = (url: string) => new TestOAuthClient('unused: the document names the client', {}, url);

/** The two SDK apps, each with its own document; only the 1.x one's token is kept for the Inspector. */
const SDK_APPS = [
  {
    title:
      'SDK 1.x: connects with the URL and its metadata URL only; the gateway fetches the document; tools run as the person; the token names the document',
    sdk: SDK_1,
    path: '/sdk1/client.json',
    appName: 'Desk app (SDK 1)',
    clientName: 'cimd-1',
    text: 'cimd',
    keepToken: true,
  },
  {
    title: 'SDK 2.x: the same with @modelcontextprotocol/client',
    sdk: SDK_2,
    path: '/sdk2/client.json',
    appName: 'Desk app (SDK 2)',
    clientName: 'cimd-2',
    text: 'cimd v2',
    keepToken: false,
  },
];

/** Starts the all-in-one as `gateway start` does: egress public-only but for 127.0.0.1, trusting the run's CA. */
async function startGatewayUnderTest(): Promise<void> {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  gateway = startProcess({
    name: 'gateway',
    command: join(REPO_ROOT, 'node_modules', '.bin', 'tsx'),
    args: [
      join(REPO_ROOT, 'apps', 'gateway', 'src', 'cli.ts'),
      'start',
      '--port',
      String(port),
      '--data-dir',
      join(dir, 'data'),
    ],
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      INIT_CWD: dir,
      LOG_LEVEL: 'warn',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      GATEWAY_PUBLIC_URL: base,
      EGRESS_POLICY: 'public-only',
      EGRESS_ALLOW: '127.0.0.1/32',
      NODE_EXTRA_CA_CERTS: tls.caFile,
    },
  });
  await waitForHealthy(`${base}/health`, gateway, 90_000);
}

/** Signs the admin in and lets them use the fixture's tools through a provider. */
async function registerUpstream(): Promise<void> {
  const login = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  const { token, user } = (await login.json()) as { token: string; user: { id: string } };
  await offerEcho(base, token, upstream, user.id);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentgw-cimd-'));
  tls = createTestTlsAuthority(dir);
  documents = await startDocumentServer(tls);
  // The console's sign-in and consent pages come from the dashboard's build.
  await promisify(execFile)('pnpm', ['--filter', '@agentgw/dashboard', 'build'], { cwd: REPO_ROOT });
  upstream = await startToolsUpstream();
  await startGatewayUnderTest();
  await registerUpstream();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await upstream?.close();
  await documents?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const endpoint = () => new URL(`${base}/api/v1/mcp/mcp`);
/** Access tokens the SDK clients got, for the Inspector below. */
const issued: { clientId: string; accessToken: string }[] = [];

describe.skipIf(!existsSync(CHROMIUM))('MCP clients identified by their client ID metadata document', () => {
  it('advertises client ID metadata documents in its authorization server metadata', async () => {
    const metadata = (await fetch(`${base}/.well-known/oauth-authorization-server`).then((r) => r.json())) as Record<
      string,
      unknown
    >;
    expect(metadata).toMatchObject({
      issuer: base,
      client_id_metadata_document_supported: true,
      code_challenge_methods_supported: ['S256'],
    });
  });

  for (const { title, sdk, path, appName, clientName, text, keepToken } of SDK_APPS) {
    it(title, async () => {
      const url = documents.serve(path, documentFor(`${documents.origin}${path}`, appName));
      const provider = metadataUrlClient(url);
      const authorizationUrl = await firstConnectionRefused(sdk, endpoint(), provider, clientName);
      // No registration: the client id is the document's URL.
      expect(provider.client?.client_id).toBe(url);
      expect(authorizationUrl.searchParams.get('client_id')).toBe(url);
      const callback = await signInAndAllow(authorizationUrl, appName);
      expect(documents.requests).toContain(`127.0.0.1 ${path}`);
      await sdk.finishAuth(endpoint(), provider, callback);

      await (await listsAndCallsEcho(sdk, endpoint(), provider, clientName, text)).close();
      expect(claimsOf(provider.saved!.access_token)).toMatchObject({ client_id: url, aud: endpoint().href });
      if (keepToken) issued.push({ clientId: url, accessToken: provider.saved!.access_token });
    });
  }

  describe('refuses unusable documents with RFC 6749 errors, never a 500', () => {
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    /** The authorization request a client with id `clientId` would send; the answer is not followed. */
    const authorize = (clientId: string, redirectUri = REDIRECT) =>
      fetch(
        `${base}/oauth/authorize?${new URLSearchParams({
          client_id: clientId,
          response_type: 'code',
          redirect_uri: redirectUri,
          scope: 'mcp',
          resource: endpoint().href,
          state: 'st-cimd',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        })}`,
        { redirect: 'manual' },
      );
    const expectRefused = async (res: Response, error: string) => {
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(await res.json()).toMatchObject({ error, error_description: expect.any(String) });
    };

    it('a document whose client_id is not its URL', async () => {
      const url = documents.serve(
        '/mismatch/client.json',
        documentFor(`${documents.origin}/other/client.json`, 'Impostor'),
      );
      await expectRefused(await authorize(url), 'invalid_client');
      expect(documents.requests).toContain('127.0.0.1 /mismatch/client.json');
    });

    it('a redirect URI the document does not list', async () => {
      const url = documents.serve(
        '/redirects/client.json',
        documentFor(`${documents.origin}/redirects/client.json`, 'Redirects'),
      );
      for (const redirect of ['https://evil.example/callback', 'http://127.0.0.1:53682/elsewhere'])
        await expectRefused(await authorize(url, redirect), 'invalid_redirect_uri');
    });

    it('a document over the size bound (16 KiB)', async () => {
      const url = `${documents.origin}/big/client.json`;
      documents.serve(
        '/big/client.json',
        documentFor(url, 'Big', { client_uri: `https://app.example/${'x'.repeat(17 * 1024)}` }),
      );
      await expectRefused(await authorize(url), 'invalid_client');
    });

    it('a document on an address the egress policy refuses (::1 here, reachable but not allowed), and an unreachable one', async () => {
      const v6 = `${documents.originV6}/private/client.json`;
      documents.serve('/private/client.json', documentFor(v6, 'Private'));
      // The listener answers whoever trusts the CA: the refusal below is the policy's, not a dead port.
      const direct = await new Promise<number>((resolve, reject) =>
        httpsGet(v6, { ca: tls.ca }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject),
      );
      expect(direct).toBe(200);
      const seenBefore = documents.requests.filter((r) => r.startsWith('::1')).length;
      await expectRefused(await authorize(v6), 'invalid_client');
      expect(documents.requests.filter((r) => r.startsWith('::1')).length).toBe(seenBefore);
      await expectRefused(await authorize(`https://127.0.0.1:${await freePort()}/gone/client.json`), 'invalid_client');
    });

    it('plain http, even on loopback and allowed by the egress policy, is no metadata URL: never fetched', async () => {
      const asked: string[] = [];
      const plain = createHttpServer((req, res) => {
        asked.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'application/json' }).end(documentFor(url, 'Plain http'));
      });
      await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/client.json`;
      try {
        await expectRefused(await authorize(url), 'invalid_client');
        expect(asked).toEqual([]);
      } finally {
        plain.close();
      }
    });
  });

  it('the MCP Inspector CLI (v1, bearer header) lists and calls tools with a token the flow issued', async () => {
    expect(issued).toHaveLength(1);
    const cli = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli');
    const inspect = (...args: string[]) =>
      runInspector(cli, [
        endpoint().href,
        '--cli',
        '--transport',
        'http',
        '--header',
        `Authorization: Bearer ${issued[0]!.accessToken}`,
        ...args,
      ]);
    const listed = await inspect('--method', 'tools/list');
    expect(listed.code, listed.output).toBe(0);
    expect((JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['echo']);
    const called = await inspect('--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=inspector');
    expect(called.code, called.output).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({ content: [{ type: 'text', text: 'echo:inspector' }] });
    // Without the token it is refused (it has no OAuth flow of its own).
    const refused = await runInspector(cli, [
      endpoint().href,
      '--cli',
      '--transport',
      'http',
      '--method',
      'tools/list',
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/401|unauthorized/i);
  });
});

/**
 * Runs the Inspector CLI to its end; stdout alone is the method's JSON answer. Its working
 * directory is the CLI's own build/: 1.0.3 tests for its package.json relative to the working
 * directory but imports it relative to the module, and fails anywhere else.
 */
function runInspector(cli: string, args: string[]): Promise<{ code: number | null; stdout: string; output: string }> {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: dirname(cli),
    env: { PATH: process.env.PATH ?? '', HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, output: `${stdout}\n${stderr}` })),
  );
}
