import { newId } from '@agentgw/core';
import { json, migrateToLatest, openDatabase } from '@agentgw/db';
import { seedEmbeddedDataDir } from '@agentgw/db/testing';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanEnv, GATEWAY_BUNDLE, startGatewayProcessUnderTest, type Server } from './cli-process.fixtures.js';

const LISTENING = /Agent Gateway listening on http:\/\/127\.0\.0\.1:(\d+)/;
// A first start creates the embedded database (initdb): the bound catches hangs, not slowness.
const PROCESS_MS = 300_000;
const ADMIN = { ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'correct-horse-1' };
const SHUTDOWN_REASON = 'The gateway shut down before a decision; the call was not run.';
const LEFT_OPEN_REASON = 'The gateway stopped before the call finished; its outcome is unknown.';

// One data directory for both tests: creating the embedded database (initdb) is the slow part.
let dir: string;
let server: Server | undefined;
let upstream: McpFixture | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-shutdown-'));
});
afterEach(async () => {
  await server?.stop();
  server = undefined;
  await upstream?.close();
  upstream = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const dataDir = () => join(dir, '.gateway-data');
/** A start on the data directory, seeded from the migrated image when it has no database yet. */
async function start(): Promise<Server> {
  await seedEmbeddedDataDir(join(dataDir(), 'pgdata'));
  return startGatewayProcessUnderTest([GATEWAY_BUNDLE, 'start', '--port', '0'], {
    cwd: dir,
    env: cleanEnv(ADMIN),
    ready: LISTENING,
    timeoutMs: PROCESS_MS,
  });
}

/** The embedded database while no gateway runs on it. */
async function withDatabase<T>(use: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<T>): Promise<T> {
  const handle = await openDatabase({ dataDir: dataDir() });
  try {
    await migrateToLatest(handle.db);
    return await use(handle.db);
  } finally {
    await handle.close();
  }
}

/** Admin login, then a provider, an agent allowed `*` and held on `risky`: the agent's runtime token. */
async function setUp(base: string, endpoint: string): Promise<{ adminToken: string; agentToken: string }> {
  const call = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(res.ok, JSON.stringify(parsed)).toBe(true);
    return parsed;
  };
  const { token } = await call('POST', '/auth/login', null, {
    email: ADMIN.ADMIN_EMAIL,
    password: ADMIN.ADMIN_PASSWORD,
  });
  const { provider } = await call('POST', '/admin/tool-providers', token, { name: 'held', pattern: '*', endpoint });
  const created = await call('POST', '/admin/agents', token, { name: 'held-bot', upstreamUrl: 'http://127.0.0.1:9/a' });
  for (const [action, toolPattern] of [
    ['allow', '*'],
    ['require_confirmation', 'risky'],
  ] as const) {
    await call('POST', '/admin/provider-access', token, {
      subjectType: 'agent',
      subjectId: created.agent.id,
      providerId: provider.id,
      action,
      toolPattern,
    });
  }
  return { adminToken: token as string, agentToken: created.runtime_token as string };
}

describe('shutdown with a held call open (all-in-one, SIGTERM)', () => {
  it(
    'answers the held MCP call with a JSON-RPC error, expires its confirmation and fails its audit record',
    async () => {
      upstream = await startMcpServer({ name: 'held', tools: [{ name: 'risky', handler: () => 'ran' }] });
      server = await start();
      const base = `http://127.0.0.1:${server.port}`;
      const { adminToken, agentToken } = await setUp(base, upstream.url);

      const client = new Client({ name: 'held-client', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/api/v1/mcp/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
        }),
      );
      const progress: unknown[] = [];
      const held = client
        .callTool({ name: 'risky', arguments: { n: 1 } }, undefined, { onprogress: (p) => progress.push(p) })
        .then(
          (result) => ({ result }),
          (err: unknown) => ({ err }),
        );
      // Held: the confirmation is listed as pending.
      await vi.waitFor(
        async () => {
          const res = await fetch(`${base}/api/v1/confirmation/list?status=pending`, {
            headers: { authorization: `Bearer ${adminToken}` },
          });
          expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(1);
        },
        { timeout: 30_000, interval: 200 },
      );

      const stopped = await server.stop('SIGTERM');
      server = undefined;
      expect(stopped.code).toBe(0);
      const answer = await held;
      expect('err' in answer, JSON.stringify(answer)).toBe(true);
      const err = (answer as { err: unknown }).err;
      expect(err).toBeInstanceOf(McpError);
      expect(err).toMatchObject({
        code: -32000,
        message: expect.stringContaining('The gateway is shutting down; the call was not run.'),
        data: { code: 'SHUTTING_DOWN' },
      });
      expect(upstream.calls.filter((c) => c.tool === 'risky')).toHaveLength(0);
      await client.close().catch(() => undefined);

      await withDatabase(async (db) => {
        const confirmations = await db.selectFrom('confirmations').select(['status', 'reason', 'audit_id']).execute();
        expect(confirmations).toEqual([{ status: 'expired', reason: SHUTDOWN_REASON, audit_id: expect.any(String) }]);
        const audit = await db
          .selectFrom('audit_logs')
          .select(['status', 'error', 'tool_name'])
          .where('id', '=', confirmations[0]!.audit_id!)
          .executeTakeFirstOrThrow();
        expect(audit).toEqual({ status: 'failed', error: SHUTDOWN_REASON, tool_name: 'risky' });
      });
    },
    3 * PROCESS_MS,
  );

  it(
    'on start, closes what a crash left open: a confirmation past its deadline, a held one, a pending audit record',
    async () => {
      // The crash's leftovers, written while no gateway runs on the data.
      const now = Date.now();
      const ids = { overdue: newId(), held: newId(), call: newId(), overdueAudit: newId(), heldAudit: newId() };
      await withDatabase(async (db) => {
        const audit = (id: string) => ({
          id,
          user_id: null,
          agent_id: null,
          end_user_id: null,
          provider_id: 'p',
          tenant_id: null,
          tool_name: 'risky',
          arguments: json({}),
          status: 'pending' as const,
          created_at: new Date(now - 60_000),
          updated_at: new Date(now - 60_000),
        });
        await db
          .insertInto('audit_logs')
          .values([audit(ids.call), audit(ids.overdueAudit), audit(ids.heldAudit)])
          .execute();
        const confirmation = (id: string, auditId: string, expiresAt: Date) => ({
          id,
          audit_id: auditId,
          agent_id: null,
          user_id: null,
          end_user_id: null,
          tenant_id: null,
          provider_id: 'p',
          tool_name: 'risky',
          arguments: json({}),
          risk_level: 'high' as const,
          call_hash: 'h',
          status: 'pending' as const,
          created_at: new Date(now - 60_000),
          expires_at: expiresAt,
        });
        await db
          .insertInto('confirmations')
          .values([
            confirmation(ids.overdue, ids.overdueAudit, new Date(now - 1_000)),
            confirmation(ids.held, ids.heldAudit, new Date(now + 600_000)),
          ])
          .execute();
      });

      server = await start();
      // Read once the process has exited: the logger writes asynchronously, so its line may come
      // after the banner that ended the start (a CI run read the output between the two).
      const { stdout: output } = await server.stop();
      server = undefined;
      expect(output).toContain('closed what an earlier run left open');

      await withDatabase(async (db) => {
        const confirmations = await db
          .selectFrom('confirmations')
          .select(['id', 'status', 'reason'])
          .orderBy('id')
          .execute();
        expect(confirmations).toEqual(
          expect.arrayContaining([
            { id: ids.overdue, status: 'rejected', reason: 'Request timed out.' },
            { id: ids.held, status: 'expired', reason: SHUTDOWN_REASON },
          ]),
        );
        const audits = await db.selectFrom('audit_logs').select(['id', 'status', 'error']).execute();
        expect(audits).toEqual(
          expect.arrayContaining([
            { id: ids.call, status: 'failed', error: LEFT_OPEN_REASON },
            { id: ids.overdueAudit, status: 'rejected', error: 'Request timed out.' },
            { id: ids.heldAudit, status: 'failed', error: SHUTDOWN_REASON },
          ]),
        );
      });
    },
    3 * PROCESS_MS,
  );
});
