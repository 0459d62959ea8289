import { startEverything } from '@agentgw/testkit';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advertisedCapabilities } from './advertised-capabilities.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { createRuleBoundAgent } from './testing/rule-bound-agents.js';
import { startStdioBridge, type BridgedServer } from './testing/stdio-bridge.js';

// Issue 33.4: initialize advertised a fixed set whatever the upstream offered. Now the proxy
// advertises its upstream's features plus the gateway's own, the unified endpoint the union.
let gw: GatewayUnderTest;
let memory: BridgedServer;
let everything: { url: string; child: ChildProcess };
const ids = { memory: '', everything: '' };
let token = '';

beforeAll(async () => {
  [memory, everything, gw] = await Promise.all([
    startStdioBridge('@modelcontextprotocol/server-memory', [], {
      MEMORY_FILE_PATH: join(tmpdir(), `agentgw-memory-${process.pid}.jsonl`),
    }),
    startEverything(),
    startGatewayUnderTest(),
  ]);
  for (const [name, url] of [
    ['memory', memory.url],
    ['everything', everything.url],
  ] as const) {
    const provider = await gw.catalog.providers.create(gw.admin, {
      name,
      pattern: '*',
      endpoint: url,
      authType: 'none',
      priority: 0,
    });
    ids[name] = provider.id;
  }
  token = (await createRuleBoundAgent(gw, { name: 'inspector-bot' })).runtimeToken;
}, 180_000);

afterAll(async () => {
  await gw?.close();
  await memory?.close();
  everything?.child.kill('SIGTERM');
});

const auth = () => ({ headers: { authorization: `Bearer ${token}` } });

/** An SDK 1.x client (a session revision, as the Inspector) connected to a gateway path. */
async function legacyClient(path: string): Promise<Client> {
  const client = new Client({ name: 'inspector-like', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}${path}`), { requestInit: auth() }));
  return client;
}

const proxyOf = (id: string) => `/api/v1/mcp-proxy/${id}/mcp`;

describe('initialize advertises what the upstreams offer plus what the gateway adds', () => {
  it('the proxy of server-memory (tools and resources): those, logging and the extensions, no prompts or completions; calls work', async () => {
    const client = await legacyClient(proxyOf(ids.memory));
    try {
      const caps = client.getServerCapabilities()!;
      expect(Object.keys(caps).sort()).toEqual(['extensions', 'logging', 'resources', 'tools']);
      expect(caps.resources).toEqual({ listChanged: true, subscribe: true });
      expect(await client.setLoggingLevel('debug')).toEqual({});
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('read_graph');
      const read = await client.callTool({ name: 'read_graph', arguments: {} });
      expect(read.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('the proxy of server-everything: its resources (with subscribe), prompts and completions too', async () => {
    const client = await legacyClient(proxyOf(ids.everything));
    try {
      const caps = client.getServerCapabilities()!;
      expect(caps).toMatchObject({
        tools: {},
        logging: {},
        prompts: {},
        completions: {},
        resources: { subscribe: true },
      });
      expect((await client.listPrompts()).prompts.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('the unified endpoint: the union over the caller’s providers; narrowed to server-memory, only its features', async () => {
    const both = await legacyClient('/api/v1/mcp/mcp');
    const narrowed = await legacyClient(`/api/v1/mcp/mcp?providers=${ids.memory}`);
    try {
      expect(both.getServerCapabilities()).toMatchObject({
        prompts: {},
        completions: {},
        resources: { subscribe: true },
      });
      expect(Object.keys(narrowed.getServerCapabilities()!).sort()).toEqual([
        'extensions',
        'logging',
        'resources',
        'tools',
      ]);
    } finally {
      await both.close();
      await narrowed.close();
    }
  });

  it('a 2026-07-28 client’s server/discover through the proxy of server-memory names the same set', async () => {
    const client = new ModernClient(
      { name: 'modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new ModernTransport(new URL(`${gw.url}${proxyOf(ids.memory)}`), { requestInit: auth() }));
    try {
      expect(Object.keys(client.getServerCapabilities() ?? {}).sort()).toEqual([
        'extensions',
        'logging',
        'resources',
        'tools',
      ]);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('read_graph');
    } finally {
      await client.close();
    }
  });
});

describe('advertisedCapabilities', () => {
  it('counts an upstream that could not be asked as offering every routable feature', () => {
    expect(advertisedCapabilities([{ tools: {} }, null])).toMatchObject({
      resources: { listChanged: true, subscribe: true },
      prompts: { listChanged: true },
      completions: {},
    });
    expect(advertisedCapabilities([])).toEqual({
      tools: { listChanged: true },
      logging: {},
      extensions: expect.any(Object),
    });
  });
});
