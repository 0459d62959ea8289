import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';
import { statelessRpc } from '../stateless-rpc.js';

// Issue 21.3: the unified endpoint routes completion, subscriptions, templated reads and log
// levels to the provider owning the name, uri or template (two real SDK upstreams behind it).
let gw: GatewayUnderTest;
let docs: McpFixture;
let notes: McpFixture;
let runtimeToken: string;
const levels: Record<string, string[]> = { docs: [], notes: [] };
const subscribed: string[] = [];

/** Logging and subscriptions on an SDK server (McpServer has no helper for them). */
const withLoggingAndSubscriptions = (server: McpServer, name: string): void => {
  server.server.registerCapabilities({ logging: {}, resources: { subscribe: true } });
  server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
    levels[name]!.push(request.params.level);
    return {};
  });
  server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    subscribed.push(`${name}:+${request.params.uri}`);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.push(`${name}:-${request.params.uri}`);
    return {};
  });
};

beforeAll(async () => {
  docs = await startMcpServer({
    name: 'docs',
    tools: [{ name: 'docs_echo', handler: () => 'docs' }],
    setup: (server) => {
      withLoggingAndSubscriptions(server, 'docs');
      const template = new ResourceTemplate('test://template/{id}/data', {
        list: undefined,
        complete: { id: (value) => ['123', '124'].filter((v) => v.startsWith(value)) },
      });
      server.registerResource('data', template, { mimeType: 'application/json' }, (uri, { id }) => ({
        contents: [{ uri: uri.href, text: JSON.stringify({ id, from: 'docs' }) }],
      }));
      server.registerPrompt(
        'greet',
        {
          argsSchema: {
            who: completable(z.string(), (value) => ['alice', 'albert'].filter((v) => v.startsWith(value))),
          },
        },
        ({ who }) => ({
          messages: [{ role: 'user', content: { type: 'text', text: `hi ${who}` } }],
        }),
      );
    },
  });
  notes = await startMcpServer({
    name: 'notes',
    tools: [{ name: 'notes_echo', handler: () => 'notes' }],
    setup: (server) => {
      withLoggingAndSubscriptions(server, 'notes');
      server.registerResource('note', new ResourceTemplate('notes://{+path}', { list: undefined }), {}, (uri) => ({
        contents: [{ uri: uri.href, text: 'from notes' }],
      }));
      server.registerPrompt('summarise', { argsSchema: { style: completable(z.string(), () => ['short']) } }, () => ({
        messages: [],
      }));
    },
  });
  gw = await startGatewayUnderTest();
  const { catalog, admin } = gw;
  await catalog.providers.create(admin, {
    name: 'docs',
    pattern: 'docs_*',
    endpoint: docs.url,
    authType: 'none',
    priority: 0,
  });
  await catalog.providers.create(admin, {
    name: 'notes',
    pattern: 'notes_*',
    endpoint: notes.url,
    authType: 'none',
    priority: 1,
  });
  runtimeToken = (await createRuleBoundAgent(gw)).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await docs?.close();
  await notes?.close();
});

const unified = () => `${gw.url}/api/v1/mcp/mcp`;
const bearer = () => ({ authorization: `Bearer ${runtimeToken}` });

async function connect(): Promise<ClientV1> {
  const client = new ClientV1({ name: 'owned-methods-test', version: '1.0.0' });
  await client.connect(new TransportV1(new URL(unified()), { requestInit: { headers: bearer() } }));
  return client;
}

describe('the unified endpoint routes methods to the provider that owns them (SDK 1.x client, session)', () => {
  it('advertises logging, completions and resource subscriptions', async () => {
    const client = await connect();
    expect(client.getServerCapabilities()).toMatchObject({
      logging: {},
      completions: {},
      resources: { subscribe: true },
    });
    await client.close();
  });

  it('reads a templated uri from the provider whose template it matches', async () => {
    const client = await connect();
    const docsRead = await client.readResource({ uri: 'test://template/123/data' });
    expect(JSON.parse((docsRead.contents[0] as { text: string }).text)).toEqual({ id: '123', from: 'docs' });
    const notesRead = await client.readResource({ uri: 'notes://a/b/c' });
    expect(notesRead.contents[0]).toMatchObject({ uri: 'notes://a/b/c', text: 'from notes' });
    await expect(client.readResource({ uri: 'test://template/123/other' })).rejects.toMatchObject({ code: -32002 });
    await client.close();
  });

  it('completes a prompt argument at the prompt owner and a template variable at the template owner', async () => {
    const client = await connect();
    const prompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'who', value: 'al' },
    });
    expect(prompt.completion.values).toEqual(['alice', 'albert']);
    const other = await client.complete({
      ref: { type: 'ref/prompt', name: 'summarise' },
      argument: { name: 'style', value: '' },
    });
    expect(other.completion.values).toEqual(['short']);
    const template = await client.complete({
      ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
      argument: { name: 'id', value: '12' },
    });
    expect(template.completion.values).toEqual(['123', '124']);
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'nobody' }, argument: { name: 'x', value: '' } }),
    ).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it('sets the log level on every reachable provider, for the session', async () => {
    const client = await connect();
    await client.setLoggingLevel('warning');
    expect(levels).toEqual({ docs: ['warning'], notes: ['warning'] });
    await expect(client.setLoggingLevel('loud' as 'info')).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it('subscribes and unsubscribes on the owner of the resource, and refuses a resource nobody offers', async () => {
    const client = await connect();
    await client.subscribeResource({ uri: 'notes://x' });
    await client.unsubscribeResource({ uri: 'test://template/7/data' });
    expect(subscribed).toEqual(['notes:+notes://x', 'docs:-test://template/7/data']);
    await expect(client.subscribeResource({ uri: 'nowhere://x' })).rejects.toMatchObject({ code: -32002 });
    await client.close();
  });
});

describe('the same routing serves a sessionless 2026-07-28 caller', () => {
  it('completes and reads through the stateless wire', async () => {
    const read = await statelessRpc(unified(), bearer(), 'resources/read', { uri: 'test://template/5/data' });
    expect(read.status).toBe(200);
    expect(read.body.result).toMatchObject({ contents: [{ uri: 'test://template/5/data' }] });
    const completed = await statelessRpc(unified(), bearer(), 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'who', value: 'alb' },
    });
    expect(completed.body.result).toMatchObject({ completion: { values: ['albert'] } });
  });
});
