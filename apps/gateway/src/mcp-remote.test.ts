import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedEmbeddedDataDir } from '@agentgw/db/testing';
import { freePort, type McpFixture } from '@agentgw/testkit';
import { TestBrowser } from './oauth-test-browser.js';
import { offerEcho, startToolsUpstream } from './oauth-test-clients.js';
import { cleanEnv, GATEWAY_BUNDLE, startGatewayProcessUnderTest, type Server } from './cli-process.fixtures.js';

// mcp-remote (a real MCP client nobody here wrote) against the gateway started with nothing but an
// admin account: no GATEWAY_PUBLIC_URL, so the sign-in rests on the address derived on loopback.
const MCP_REMOTE = fileURLToPath(new URL('../node_modules/mcp-remote/dist/proxy.js', import.meta.url));
const LISTENING = /Agent Gateway listening on http:\/\/127\.0\.0\.1:(\d+)/;
// A first start creates the embedded database (initdb): the bound catches hangs, not slowness.
const PROCESS_MS = 600_000;
// MCP_REMOTE_AGAINST (with MCP_REMOTE_ADMIN=email:password) points the test at a gateway already
// started by hand, e.g. the README's `pnpm start`; by default it starts its own.
const against = process.env.MCP_REMOTE_AGAINST;
const [adminEmail, adminPassword] = (process.env.MCP_REMOTE_ADMIN ?? 'root@example.com:correct-horse-1').split(':');
const ADMIN = { email: adminEmail!, password: adminPassword! };

let dir: string;
let base: string;
let server: Server | undefined;
let remote: ChildProcessWithoutNullStreams | undefined;
let upstream: McpFixture;
beforeAll(async () => {
  upstream = await startToolsUpstream();
  dir = mkdtempSync(join(tmpdir(), 'gateway-mcp-remote-'));
  if (against) return void (base = against);
  // A fixed port, as `pnpm start` has: the public URL (and with it the sign-in) is derived only then.
  await seedEmbeddedDataDir(join(dir, '.gateway-data', 'pgdata'));
  server = await startGatewayProcessUnderTest([GATEWAY_BUNDLE, 'start', '--port', String(await freePort())], {
    cwd: dir,
    env: cleanEnv({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password }),
    ready: LISTENING,
    timeoutMs: PROCESS_MS,
  });
  base = `http://127.0.0.1:${server.port}`;
}, PROCESS_MS);
afterAll(async () => {
  remote?.kill('SIGTERM');
  await server?.stop();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A request the gateway sends the client through mcp-remote (an elicitation), and how the test answers it. */
type ServerRequest = { id: number | string; method: string; params: Record<string, unknown> };

/** JSON-RPC over mcp-remote's stdio: one line each way; requests from the server go to `answer` (none expected: an error). */
function stdioRpc(child: ChildProcessWithoutNullStreams, answer: (request: ServerRequest) => unknown = () => null) {
  const waiting = new Map<number, (message: unknown) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as { id?: number | string; method?: string };
    if (message.method !== undefined && message.id !== undefined) {
      const result = answer(message as ServerRequest);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, result })}\n`);
    } else if (typeof message.id === 'number') waiting.get(message.id)?.(message);
  });
  return {
    request: (id: number, method: string, params: Record<string, unknown> = {}) =>
      new Promise<unknown>((resolve) => {
        waiting.set(id, resolve);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      }),
    notify: (method: string) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`),
  };
}

describe('mcp-remote against `gateway start` with nothing configured', () => {
  it(
    "signs a person in by OAuth (the browser step driven headless), lists and calls tools, and passes a held call's elicitation to its stdio client, whose approval runs it once",
    async () => {
      // The admin offers the person (the admin here) one provider's echo: what its client then lists.
      const login = await fetch(`${base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(ADMIN),
      });
      const admin = (await login.json()) as { token: string; user: { id: string } };
      const providerId = await offerEcho(base, admin.token, upstream, admin.user.id, `remote-tools-${Date.now()}`);
      remote = spawn(process.execPath, [MCP_REMOTE, `${base}/api/v1/mcp/mcp`], {
        cwd: dir,
        // Its tokens in a directory of this test; no browser to open (the URL is read from its log).
        env: cleanEnv({ MCP_REMOTE_CONFIG_DIR: join(dir, 'mcp-auth'), BROWSER: 'false' }),
      });
      let log = '';
      const authorizeUrl = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no authorization URL:\n${log}`)), 120_000);
        remote!.stderr.on('data', (d: Buffer) => {
          log += d.toString();
          const found = /Please authorize this client by visiting:\s*(\S+)/.exec(log);
          if (found) {
            clearTimeout(timer);
            resolve(found[1]!);
          }
        });
      });
      const redirect = new URL(authorizeUrl).searchParams.get('redirect_uri')!;
      expect(new URL(authorizeUrl).origin).toBe(base);

      const browser = new TestBrowser();
      const uid = await browser.openAuthorization(authorizeUrl);
      await browser.signIn(base, ADMIN);
      const callback = await browser.approve(base, uid, redirect);
      expect(callback.get('code')).toBeTruthy();
      // The browser lands on mcp-remote's own callback listener, which takes the code from there.
      expect((await fetch(`${redirect}?${callback}`)).status).toBe(200);

      // The stdio client answers elicitations (issue 34: a held call confirmed in the person's client).
      const asked: ServerRequest[] = [];
      const rpc = stdioRpc(remote, (request) => {
        asked.push(request);
        return { action: 'accept', content: { decision: 'approve' } };
      });
      const init = (await rpc.request(1, 'initialize', {
        protocolVersion: '2025-06-18',
        capabilities: { elicitation: {} },
        clientInfo: { name: 'mcp-remote-test', version: '1.0.0' },
      })) as { result?: { serverInfo?: { name: string } } };
      expect(init.result?.serverInfo?.name, log).toBeTruthy();
      rpc.notify('notifications/initialized');
      const listed = (await rpc.request(2, 'tools/list')) as { result?: { tools: { name: string }[] } };
      console.log(`mcp-remote tools/list: ${JSON.stringify(listed)}`);
      // `echo`, or `<provider>__echo` on a gateway where another provider had the name first (the README's demo).
      const names = listed.result?.tools.map((t) => t.name) ?? [];
      expect(names).toEqual([expect.stringMatching(/^(remote_tools_\d+__)?echo$/)]);
      const called = await rpc.request(3, 'tools/call', { name: names[0], arguments: { text: 'via mcp-remote' } });
      console.log(`mcp-remote tools/call: ${JSON.stringify(called)}`);
      expect(called).toMatchObject({ result: { content: [{ type: 'text', text: 'echo:via mcp-remote' }] } });

      // A rule holds `secret` for this person and lets their own client confirm it: mcp-remote passes
      // the gateway's elicitation to its stdio client, whose approval runs the call once.
      const rule = await fetch(`${base}/api/v1/admin/provider-access`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          subjectType: 'user',
          subjectId: admin.user.id,
          providerId,
          action: 'require_confirmation',
          toolPattern: 'secret',
          confirmCarriers: ['client'],
        }),
      });
      expect(rule.status).toBe(201);
      const secret = names[0]!.replace(/echo$/, 'secret');
      const confirmed = await rpc.request(4, 'tools/call', { name: secret, arguments: {} });
      console.log(`mcp-remote held tools/call: ${JSON.stringify(confirmed)}`);
      expect(asked.map((r) => r.method)).toEqual(['elicitation/create']);
      expect(String(asked[0]!.params.message)).toContain('secret');
      expect(confirmed).toMatchObject({ result: { content: [{ type: 'text', text: 'not for this user' }] } });
      // The audit row names the carrier and mcp-remote's OAuth client as the one that answered.
      const audit = await fetch(`${base}/api/v1/audit/logs?tool_name=secret`, {
        headers: { authorization: `Bearer ${admin.token}` },
      });
      const [entry] = ((await audit.json()) as { data: { status: string; decidedVia: unknown }[] }).data;
      expect(entry).toMatchObject({
        status: 'completed',
        decidedVia: { carrier: 'client', clientId: expect.any(String) },
      });
    },
    PROCESS_MS,
  );
});
