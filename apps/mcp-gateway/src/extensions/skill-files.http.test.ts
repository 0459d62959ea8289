import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';
import type { RecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { startModernUpstream } from '../testing/modern-upstream.js';
import { ALLOW_EVERY_TOOL, createRuleBoundAgent } from '../testing/rule-bound-agents.js';

// A skill's files read as resources, from the side of an agent a rule denies `skill:secret-*`:
// the provider lists the denied skill's files as plain resources too, so only the gateway's
// check stands between the agent and them, on both endpoints.
let gw: GatewayUnderTest;
let upstream: RecordingUpstream;
let providerId: string;
const tokens = { alice: '', bob: '' };

const SKILLS = [
  { uri: 'skill://pdf-processing/SKILL.md', frontmatter: { name: 'pdf-processing', description: 'PDFs' } },
  {
    uri: 'skill://pdf-processing/secret-nested/SKILL.md',
    frontmatter: { name: 'secret-nested', description: 'nested' },
  },
  { uri: 'skill://secret-ops/SKILL.md', frontmatter: { name: 'secret-ops', description: 'ops' } },
];
const FILES = [
  'skill://pdf-processing/refs/forms.md',
  'skill://pdf-processing/secret-nested/keys.md',
  'skill://secret-ops/refs/runbook.md',
  'skill://orphan/notes.md',
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
      id: 5,
      method,
      params: {
        ...params,
        _meta: { [META_PROTOCOL_VERSION]: MODERN_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} },
      },
    }),
  });
  return (await res.json()) as {
    result?: { contents?: { uri: string; text: string }[] };
    error?: { code: number; message: string };
  };
}

const unified = () => `${gw.url}/api/v1/mcp/mcp`;
const proxy = () => `${gw.url}/api/v1/mcp-proxy/${providerId}/mcp`;
const readsSent = () =>
  upstream.requests
    .filter((r) => (r.body as { method?: string })?.method === 'resources/read')
    .map((r) => (r.body as { params: { uri: string } }).params.uri);

beforeAll(async () => {
  upstream = await startModernUpstream({ name: 'skills', capabilities: { resources: {} } }, (method, params) => {
    switch (method) {
      case 'skills/list':
        return { result: { skills: SKILLS } };
      case 'resources/list':
        return { result: { resources: FILES.map((uri) => ({ uri, name: uri })) } };
      case 'resources/templates/list':
        return { result: { resourceTemplates: [] } };
      case 'tools/list':
        return { result: { tools: [] } };
      case 'resources/read':
        // Like a server that normalizes what it is given: every uri reads as some file.
        return { result: { contents: [{ uri: params?.uri, text: `content of ${String(params?.uri)}` }] } };
      default:
        return undefined;
    }
  });
  gw = await startGatewayUnderTest();
  const { catalog, admin } = gw;
  providerId = (
    await catalog.providers.create(admin, {
      name: 'skills',
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

describe('skill files through resources/read', () => {
  it('reads an allowed skill’s file from the skill’s owner', async () => {
    for (const url of [unified(), proxy()]) {
      expect((await rpc(url, 'bob', 'resources/read', { uri: FILES[0] })).result?.contents?.[0]).toEqual({
        uri: FILES[0],
        text: `content of ${FILES[0]}`,
      });
      expect((await rpc(url, 'alice', 'resources/read', { uri: FILES[2] })).result?.contents?.[0]?.uri).toBe(FILES[2]);
    }
  });

  it('answers a denied skill’s files as a file nobody has, and never asks the provider for them', async () => {
    const before = readsSent().length;
    const attempts = [
      FILES[2]!, // the denied skill's file, listed by the provider as a resource
      FILES[1]!, // a denied skill nested in an allowed one's directory
      'skill://secret-ops/SKILL.md',
      'SKILL://secret-ops/refs/runbook.md',
      ' skill://secret-ops/refs/runbook.md',
      'skill://pdf-processing/../secret-ops/refs/runbook.md',
      'skill://pdf-processing/%2E%2e/secret-ops/refs/runbook.md',
      'skill://pdf-processing\\..\\secret-ops/refs/runbook.md',
      FILES[3]!, // under no skill at all
    ];
    for (const url of [unified(), proxy()]) {
      for (const uri of attempts) {
        expect((await rpc(url, 'bob', 'resources/read', { uri })).error, uri).toMatchObject({
          code: -32002,
          message: 'Resource not found',
        });
      }
      // The same answer as for a skill that does not exist.
      expect((await rpc(url, 'bob', 'resources/read', { uri: 'skill://nobody/SKILL.md' })).error).toMatchObject({
        code: -32002,
        message: 'Resource not found',
      });
    }
    expect(readsSent().slice(before)).toEqual([]);
  });
});
