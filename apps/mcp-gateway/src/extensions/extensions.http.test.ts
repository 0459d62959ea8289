import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';
import type { RecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { startModernUpstream } from '../testing/modern-upstream.js';
import { ALLOW_EVERY_TOOL, createRuleBoundAgent } from '../testing/rule-bound-agents.js';

// The tasks extension and skills through both endpoints, for two agents: task ids are the
// gateway's, bound to provider and principal; skills are filtered by the access rules.
let gw: GatewayUnderTest;
let upstream: RecordingUpstream;
let providerId: string;
const tokens = { alice: '', bob: '' };

const SKILLS = [
  {
    uri: 'skill://pdf-processing/SKILL.md',
    frontmatter: { name: 'pdf-processing', description: 'PDFs' },
    resources: [],
  },
  { uri: 'skill://secret-ops/SKILL.md', frontmatter: { name: 'secret-ops', description: 'ops' }, resources: [] },
];

async function rpc(url: string, who: keyof typeof tokens, method: string, params: Record<string, unknown> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${tokens[who]}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method,
      params: {
        ...params,
        _meta: {
          [META_PROTOCOL_VERSION]: MODERN_PROTOCOL_VERSION,
          [META_CLIENT_CAPABILITIES]: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        },
      },
    }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } },
  };
}

const unified = () => `${gw.url}/api/v1/mcp/mcp`;
const proxy = () => `${gw.url}/api/v1/mcp-proxy/${providerId}/mcp`;
const taskRequests = () =>
  upstream.requests.filter((r) => String((r.body as { method?: string })?.method).startsWith('tasks/'));

beforeAll(async () => {
  upstream = await startModernUpstream(
    { name: 'tasks', capabilities: { tools: {}, resources: {} } },
    (method, params) => {
      const taskId = params?.taskId;
      switch (method) {
        case 'tools/list':
          return {
            result: { tools: [{ name: 'long_job', inputSchema: { type: 'object' } }], ttlMs: 0, cacheScope: 'private' },
          };
        case 'tools/call':
          return {
            result: { resultType: 'task', taskId: 't-1', status: 'working', ttlMs: 60_000, pollIntervalMs: 1_000 },
          };
        case 'tasks/get':
        case 'tasks/cancel':
          if (taskId !== 't-1') return { error: { code: -32602, message: 'Unknown task' } };
          return {
            result:
              method === 'tasks/get'
                ? {
                    resultType: 'task',
                    taskId,
                    status: 'completed',
                    result: { content: [{ type: 'text', text: 'done' }] },
                  }
                : {},
          };
        case 'skills/list':
          return { result: { skills: SKILLS } };
        case 'skills/get':
          return { result: { skill: SKILLS.find((s) => s.uri === params?.uri) } };
        default:
          return undefined;
      }
    },
  );
  gw = await startGatewayUnderTest();
  const { catalog, admin } = gw;
  providerId = (
    await catalog.providers.create(admin, {
      name: 'tasks',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'none',
      priority: 0,
    })
  ).id;
  tokens.alice = (await createRuleBoundAgent(gw, { name: 'alice' })).runtimeToken;
  tokens.bob = (
    await createRuleBoundAgent(gw, {
      name: 'bob',
      rules: [ALLOW_EVERY_TOOL, { providerId: '*', action: 'deny', toolPattern: 'skill:secret-*' }],
    })
  ).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

describe('tasks extension', () => {
  it('gives the client a gateway task id and routes tasks/get with it to the provider, under the provider’s own id', async () => {
    for (const url of [unified(), proxy()]) {
      const created = await rpc(url, 'alice', 'tools/call', { name: 'long_job', arguments: {} });
      expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
      const taskId = created.body.result!.taskId as string;
      expect(taskId).not.toBe('t-1');
      const before = taskRequests().length;
      const polled = await rpc(url, 'alice', 'tasks/get', { taskId });
      expect(polled.body.result).toMatchObject({
        taskId,
        status: 'completed',
        result: { content: [{ type: 'text', text: 'done' }] },
      });
      const sent = taskRequests().slice(before);
      expect(
        sent.map((r) => [(r.body as { params: { taskId: string } }).params.taskId, r.headers['mcp-name']]),
      ).toEqual([['t-1', 't-1']]);
    }
  });

  it('never lets another principal read or cancel a task, nor a forged or raw id reach the provider', async () => {
    const taskId = (await rpc(unified(), 'alice', 'tools/call', { name: 'long_job', arguments: {} })).body.result!
      .taskId as string;
    const before = taskRequests().length;
    const altered = `${taskId.slice(0, -2)}${taskId.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const url of [unified(), proxy()]) {
      for (const [who, id] of [
        ['bob', taskId],
        ['alice', altered],
        ['alice', 't-1'],
        ['bob', 't-1'],
      ] as const) {
        for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
          const reply = await rpc(url, who, method, { taskId: id, inputResponses: {} });
          expect(reply.body.error, `${who} ${method} ${id}`).toMatchObject({ code: -32602, message: 'Unknown task' });
        }
      }
    }
    expect(taskRequests().length).toBe(before);
  });
});

describe('skills', () => {
  it('advertises both extensions', async () => {
    const discovered = await rpc(unified(), 'alice', 'server/discover');
    expect(discovered.body.result!.capabilities).toMatchObject({
      extensions: { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/skills': {} },
    });
  });

  it('lists and gets only the skills the access rules allow, as `skill:<name>`', async () => {
    for (const url of [unified(), proxy()]) {
      const all = await rpc(url, 'alice', 'skills/list');
      expect((all.body.result!.skills as { uri: string }[]).map((s) => s.uri)).toEqual(SKILLS.map((s) => s.uri));
      expect(all.body.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
      const some = await rpc(url, 'bob', 'skills/list');
      expect((some.body.result!.skills as { uri: string }[]).map((s) => s.uri)).toEqual([
        'skill://pdf-processing/SKILL.md',
      ]);
      expect((await rpc(url, 'alice', 'skills/get', { uri: 'skill://secret-ops/SKILL.md' })).body.result).toMatchObject(
        { skill: { uri: 'skill://secret-ops/SKILL.md' } },
      );
      expect((await rpc(url, 'bob', 'skills/get', { uri: 'skill://secret-ops/SKILL.md' })).body.error).toMatchObject({
        code: -32602,
      });
      expect((await rpc(url, 'bob', 'skills/get', { uri: 'skill://nope/SKILL.md' })).body.error).toMatchObject({
        code: -32602,
      });
    }
  });
});
