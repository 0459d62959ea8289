import { SseEventReader, startMcpServer, startMcpV2Server, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import type { Json } from './gateway-api.js';
import { rawToolsCall, sessionlessRpc } from './mcp-clients.js';
import type { SuiteContext } from './suite.js';
import { ADMIN } from './targets.js';

type Login = { token: string; userId: string };
type Agent = { id: string; token: string };

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const toolNames = (answer: { body: Json }): string[] =>
  ((answer.body?.result?.tools ?? []) as { name: string }[]).map((t) => t.name).sort();
const resultText = (answer: Json): string | undefined => answer?.body?.result?.content?.[0]?.text;

/**
 * Issue 19's fixes (items 1–6) checked from outside, over HTTP through the target's base URL
 * only (the router, on the distributed target): each test is a request sequence the old code
 * answered wrongly. Its own upstreams and providers, removed again, so later runs see none of them.
 */
export function describeSecuritySuite(ctx: () => SuiteContext): void {
  describe('security fixes (issue 19)', () => {
    let c: SuiteContext;
    let report: (line: string) => void;
    let globalUp: McpFixture;
    let tenantUp: McpFixture;
    let statefulUp: McpFixture;
    let fsUp: McpFixture;
    let statefulId: string;
    let tenantAdmin: Login;
    const stamp = Date.now();
    const cleanups: (() => Promise<unknown>)[] = [];

    const mcp = () => `${c.target.baseUrl}/api/v1/mcp/mcp`;
    const admin = <T = Json>(expected: number, method: string, path: string, body?: unknown): Promise<T> =>
      c.api.must(expected, method, path, { token: c.adminToken, body });
    /** A user made through the admin API, logged in. */
    const newUser = async (prefix: string, extra: Record<string, unknown> = {}): Promise<Login> => {
      const email = `${prefix}-${stamp}@example.com`;
      await admin(201, 'POST', '/api/v1/admin/users', {
        email,
        password: 'security-password-1',
        name: prefix,
        ...extra,
      });
      return c.api.login(email, 'security-password-1');
    };
    /** A global agent allowed on `providerId`. */
    const newAgent = async (name: string, providerId: string, requireConfirmation = false): Promise<Agent> => {
      const created = await admin(201, 'POST', '/api/v1/admin/agents', {
        name: `${name}-${stamp}`,
        upstreamUrl: 'http://127.0.0.1:9/agent',
        requireConfirmation,
      });
      await admin(201, 'POST', '/api/v1/admin/provider-access', {
        subjectType: 'agent',
        subjectId: created.agent.id,
        providerId,
        action: 'allow',
      });
      return { id: created.agent.id, token: created.runtime_token };
    };
    /** A provider made with `token`, deleted again after the last test. */
    const newProvider = async (token: string, body: Record<string, unknown>): Promise<string> => {
      const id = (await c.api.must(201, 'POST', '/api/v1/admin/tool-providers', { token, body })).provider.id as string;
      cleanups.push(() => c.api.delete(`/api/v1/admin/tool-providers/${id}`, { token }));
      return id;
    };

    beforeAll(async () => {
      c = ctx();
      // Straight to stdout like the suite's summary, so the transcript carries the lines as is.
      report = (line) => process.stdout.write(`[security e2e ${c.target.name}] ${line}\n`);
      const twoTools = (name: string) =>
        startMcpServer({
          name,
          tools: [
            { name: 'read_file', handler: (args) => `${name}:${JSON.stringify(args)}` },
            { name: `${name}_only`, handler: () => `${name} only` },
          ],
        });
      [globalUp, tenantUp, statefulUp, fsUp] = await Promise.all([
        twoTools('global'),
        twoTools('tenant'),
        startMcpServer({
          name: 'stateful',
          tools: [
            {
              name: 'sess_whoami',
              inputSchema: { n: z.number() },
              handler: (_args, call) => String(call.headers['x-gateway-agent-id']),
            },
            {
              name: 'sess_transfer',
              inputSchema: { marker: z.string() },
              handler: (args) => `sent:${args.marker as string}`,
            },
          ],
        }),
        startMcpV2Server({
          name: 'fs',
          tools: [
            { name: 'fs_read_file', handler: () => 'file contents' },
            { name: 'fs_wipe_disk', handler: () => 'disk wiped' },
          ],
        }),
      ]);
      tenantAdmin = await newUser('sec-tenant-admin', { tenantId: `sec-tenant-${stamp}`, roles: ['tenant_admin'] });
      statefulId = await newProvider(c.adminToken, {
        name: `sec-stateful-${stamp}`,
        pattern: 'sess_*',
        endpoint: statefulUp.url,
      });
    }, 60_000);

    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      await Promise.all([globalUp?.close(), tenantUp?.close(), statefulUp?.close(), fsUp?.close()]);
    });

    it("19.2: a tenant admin's `*` provider at priority 100 neither lists for nor captures the platform admin's sessionless calls", async () => {
      const globalId = await newProvider(c.adminToken, {
        name: `sec-global-${stamp}`,
        pattern: '*',
        endpoint: globalUp.url,
        priority: 0,
      });
      const tenantId = await newProvider(tenantAdmin.token, {
        name: `sec-tenant-${stamp}`,
        pattern: '*',
        endpoint: tenantUp.url,
        priority: 100,
      });
      // Users are default-deny: the admin may call anything on every provider (so only routing can
      // keep the tenant's provider out), the tenant admin its own provider.
      const adminId = (await c.api.login(ADMIN.email, ADMIN.password)).userId;
      const adminRule = (
        await admin(201, 'POST', '/api/v1/admin/provider-access', {
          subjectType: 'user',
          subjectId: adminId,
          providerId: '*',
          action: 'allow',
        })
      ).rule.id as string;
      cleanups.push(() => c.api.delete(`/api/v1/admin/provider-access/${adminRule}`, { token: c.adminToken }));
      await c.api.must(201, 'POST', '/api/v1/admin/provider-access', {
        token: tenantAdmin.token,
        body: { subjectType: 'user', subjectId: tenantAdmin.userId, providerId: tenantId, action: 'allow' },
      });
      const mine = new Set(['read_file', 'global_only', 'tenant_only']);
      const list = await sessionlessRpc(mcp(), bearer(c.adminToken), 'tools/list');
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      const listed = toolNames(list).filter((name) => mine.has(name));
      expect(listed, JSON.stringify(list.body)).toEqual(['global_only', 'read_file']);
      const call = await sessionlessRpc(mcp(), bearer(c.adminToken), 'tools/call', {
        name: 'read_file',
        arguments: {},
      });
      expect(resultText(call), JSON.stringify(call.body)).toBe('global:{}');
      expect(tenantUp.calls).toEqual([]);
      // The tenant's provider is live: its own admin's call goes there (its priority applies in its tenant).
      const own = await sessionlessRpc(mcp(), bearer(tenantAdmin.token), 'tools/call', {
        name: 'read_file',
        arguments: {},
      });
      expect(resultText(own), JSON.stringify(own.body)).toBe('tenant:{}');
      report(
        `19.2: admin tools/list = [${listed.join(', ')}]; admin read_file → "${resultText(call)}"; tenant upstream calls from the admin = 0; tenant admin's own read_file → "${resultText(own)}"`,
      );
      // The `*` providers go now: later tests (and the fault runs) route as before.
      await admin(200, 'DELETE', `/api/v1/admin/provider-access/${adminRule}`);
      await admin(200, 'DELETE', `/api/v1/admin/tool-providers/${tenantId}`);
      await admin(200, 'DELETE', `/api/v1/admin/tool-providers/${globalId}`);
    });

    it('19.3: two stateless (2026-07-28) agents never share an upstream session of a stateful server', async () => {
      const agents = [await newAgent('sec-session-a', statefulId), await newAgent('sec-session-b', statefulId)];
      // Interleaved A B B A A B: through the router's round robin each agent reaches both replicas.
      for (const [i, agent] of [0, 1, 1, 0, 0, 1].map((k, i) => [i, agents[k]!] as const)) {
        const answer = (await rawToolsCall(mcp(), bearer(agent.token), 'sess_whoami', { n: i })) as Json;
        expect(answer.status, JSON.stringify(answer)).toBe(200);
        expect(answer.body.result.content[0].text).toBe(agent.id);
      }
      // Upstream session id → the agent ids of the tool requests made on it.
      const bySession = new Map<string, Set<string>>();
      for (const r of statefulUp.requests) {
        const sid = r.headers['mcp-session-id'];
        const agentId = r.headers['x-gateway-agent-id'];
        if (typeof sid !== 'string' || typeof agentId !== 'string') continue;
        bySession.set(sid, (bySession.get(sid) ?? new Set()).add(agentId));
      }
      const sessionsOf = (agent: Agent) => [...bySession].filter(([, who]) => who.has(agent.id)).map(([sid]) => sid);
      const [a, b] = agents.map(sessionsOf) as [string[], string[]];
      expect(a.length).toBeGreaterThan(0);
      expect(b.length).toBeGreaterThan(0);
      expect(a.filter((sid) => b.includes(sid))).toEqual([]);
      for (const who of bySession.values()) expect(who.size).toBe(1);
      // Each session was opened (initialize) with its own agent's identity headers.
      const opened = statefulUp.requests
        .filter((r) => (r.body as Json)?.method === 'initialize' && r.headers['x-gateway-agent-id'] !== undefined)
        .map((r) => String(r.headers['x-gateway-agent-id']));
      expect(new Set(opened)).toEqual(new Set(agents.map((x) => x.id)));
      const short = (sid: string) => sid.slice(0, 8);
      report(
        `19.3: agent A upstream sessions = [${a.map(short).join(', ')}], agent B = [${b.map(short).join(', ')}]; shared = 0; every session's requests name one x-gateway-agent-id; initialize per agent = A×${opened.filter((id) => id === agents[0]!.id).length}, B×${opened.filter((id) => id === agents[1]!.id).length}`,
      );
    });

    it('19.4: disabling an agent ends its held call with 403 and drops the confirmation; the upstream never runs', async () => {
      const careful = await newAgent('sec-held', statefulId, true);
      const marker = `held-${stamp}`;
      const held = rawToolsCall(mcp(), bearer(careful.token), 'sess_transfer', { marker }, 60_000);
      const pending = await c.pendingWith(marker);
      const disabledAt = Date.now();
      await admin(200, 'POST', `/api/v1/admin/agents/${careful.id}/disable`);
      const answer = (await held) as Json;
      const endedMs = Date.now() - disabledAt;
      expect(answer.status, JSON.stringify(answer)).toBe(403);
      expect([-32003, -32004]).toContain(answer.body.error.code);
      expect(statefulUp.calls.filter((call) => call.arguments.marker === marker)).toEqual([]);
      await vi.waitFor(
        async () => {
          const listed = await c.api.get('/api/v1/confirmation/pending', { token: c.adminToken });
          expect(listed.status).toBe(200);
          expect(listed.body.data.map((x: Json) => x.id)).not.toContain(pending.id);
        },
        { timeout: 5_000, interval: 50 },
      );
      report(
        `19.4: held call → HTTP ${answer.status} ${answer.body.error.code} "${answer.body.error.data?.reason ?? answer.body.error.message}" ${endedMs} ms after disable; upstream calls = 0; confirmation ${pending.id.slice(0, 8)} no longer pending`,
      );
    });

    it('19.5: open SSE streams end when their user is demoted or deleted, on whichever hub replica', async () => {
      const demoted = await newUser('sec-demoted', {
        tenantId: `sec-demoted-${stamp}`,
        roles: ['agent_creator', 'tenant_admin'],
      });
      const deleted = await newUser('sec-deleted');
      // Two streams each: through the router's round robin, one per hub replica.
      const open = async (user: Login) => {
        const response = await fetch(`${c.target.baseUrl}/api/v1/stream`, {
          headers: { ...bearer(user.token), accept: 'text/event-stream' },
        });
        expect(response.status).toBe(200);
        const events = new SseEventReader(response);
        expect((await events.nextOf('connected')).data).toMatchObject({ userId: user.userId });
        return events;
      };
      const streams = {
        demoted: [await open(demoted), await open(demoted)],
        deleted: [await open(deleted), await open(deleted)],
      };
      /** Reads to the end: how long after `since` the stream ended (null = still open after 5 s). */
      const endOf = async (events: SseEventReader, since: number): Promise<number | null> => {
        try {
          while ((await events.next(Math.max(1, since + 5_000 - Date.now()))) !== null);
          return Date.now() - since;
        } catch {
          await events.close();
          return null;
        }
      };
      let since = Date.now();
      await admin(200, 'DELETE', `/api/v1/admin/users/${demoted.userId}/roles/tenant_admin`);
      const demotedEnds = await Promise.all(streams.demoted.map((s) => endOf(s, since)));
      since = Date.now();
      await admin(200, 'DELETE', `/api/v1/admin/users/${deleted.userId}`);
      const deletedEnds = await Promise.all(streams.deleted.map((s) => endOf(s, since)));
      expect(demotedEnds.every((ms) => ms !== null)).toBe(true);
      expect(deletedEnds.every((ms) => ms !== null)).toBe(true);
      const show = (ends: (number | null)[]) => ends.map((ms) => (ms === null ? 'still open' : `${ms} ms`)).join(', ');
      report(
        `19.5: demoted user's 2 streams ended after [${show(demotedEnds)}]; deleted user's 2 streams ended after [${show(deletedEnds)}]`,
      );
    });

    it('19.1: a user JWT naming an agent (X-Agent-Id) is refused 403 AGENT_ID_NOT_ALLOWED', async () => {
      const user = await newUser('sec-borrower');
      const agent = await newAgent('sec-lender', statefulId);
      const plain = await sessionlessRpc(mcp(), bearer(user.token), 'tools/list');
      expect(plain.status).toBe(200);
      const borrowed = await sessionlessRpc(mcp(), { ...bearer(user.token), 'x-agent-id': agent.id }, 'tools/list');
      expect(borrowed.status).toBe(403);
      expect(borrowed.body.code, JSON.stringify(borrowed.body)).toBe('AGENT_ID_NOT_ALLOWED');
      report(
        `19.1: user JWT alone → ${plain.status}; user JWT + X-Agent-Id → ${borrowed.status} ${borrowed.body.code}`,
      );
    });

    it("19.6: the per-provider proxy neither lists nor runs a name outside the provider's pattern", async () => {
      const fsId = await newProvider(c.adminToken, {
        name: `sec-fs-${stamp}`,
        pattern: 'fs_read*',
        endpoint: fsUp.url,
      });
      const agent = await newAgent('sec-fs-reader', fsId);
      const proxy = `${c.target.baseUrl}/api/v1/mcp-proxy/${fsId}/mcp`;
      const list = await sessionlessRpc(proxy, bearer(agent.token), 'tools/list');
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      expect(toolNames(list)).toEqual(['fs_read_file']);
      const read = await sessionlessRpc(proxy, bearer(agent.token), 'tools/call', {
        name: 'fs_read_file',
        arguments: {},
      });
      expect(resultText(read)).toBe('file contents');
      const wipe = await sessionlessRpc(proxy, bearer(agent.token), 'tools/call', {
        name: 'fs_wipe_disk',
        arguments: {},
      });
      expect(wipe.status).toBe(403);
      expect(wipe.body.error.code).toBe(-32003);
      expect(fsUp.calls.map((call) => call.tool)).toEqual(['fs_read_file']);
      report(
        `19.6: proxy tools/list = [${toolNames(list).join(', ')}]; fs_wipe_disk → HTTP ${wipe.status} ${wipe.body.error.code} "${wipe.body.error.data?.reason ?? wipe.body.error.message}"; upstream calls = [${fsUp.calls.map((call) => call.tool).join(', ')}]`,
      );
    });
  });
}
