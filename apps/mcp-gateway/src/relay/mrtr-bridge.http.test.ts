import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startConformanceServer, type ConformanceServer } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedAgent, startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';

/**
 * An upstream's input_required (MRTR) results bridged for a legacy (1.x SDK, 2025-11-25 session)
 * client: the conformance fixture, made 2026-07-28-only by a front that refuses `initialize`,
 * asks for elicitation, sampling and roots; the gateway asks the client on the call's stream
 * and retries upstream with the answers and the HMAC-signed requestState, on both endpoints.
 */
let gw: GatewayUnderTest;
let fixture: ConformanceServer;
let front: Server;
let token: string;
let providerId: string;

/** The fixture behind a front that refuses 2025-era sessions (initialize → 400), as a 2026-07-28-only server does. */
async function modernOnly(target: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => void pass(req, res));
  async function pass(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (req.method === 'POST' && (JSON.parse(body.toString() || '{}') as { method?: string }).method === 'initialize') {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Sessions are not offered' } }),
        );
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        ([name, value]) => name !== 'host' && name !== 'content-length' && typeof value === 'string',
      ),
    ) as Record<string, string>;
    const answer = await fetch(target, { method: req.method, headers, ...(req.method === 'POST' ? { body } : {}) });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

beforeAll(async () => {
  fixture = await startConformanceServer();
  const modern = await modernOnly(fixture.url);
  front = modern.server;
  gw = await startGatewayUnderTest();
  const provider = await gw.catalog.providers.create(gw.admin, {
    name: 'mrtr',
    pattern: '*',
    endpoint: modern.url,
    authType: 'none',
    priority: 0,
  });
  providerId = provider.id;
  ({ token } = await allowedAgent(gw, provider.id, 'mrtr-bot'));
});

afterAll(async () => {
  await gw?.close();
  front?.closeAllConnections();
  await new Promise<void>((resolve) => (front ? front.close(() => resolve()) : resolve()));
  await fixture?.close();
});

/** A 1.x client declaring `capabilities` and answering what it declared: elicitation (Ada / ok), sampling (Paris), roots. */
async function legacyClient(path: string, capabilities: Record<string, unknown>) {
  const client = new Client({ name: 'mrtr-v1', version: '1.0.0' }, { capabilities });
  if ('elicitation' in capabilities) {
    client.setRequestHandler(ElicitRequestSchema, (request) => ({
      action: 'accept',
      content: request.params.message === 'Please confirm' ? { ok: true } : { name: 'Ada' },
    }));
  }
  if ('sampling' in capabilities)
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: 'assistant',
      model: 'test-model',
      content: { type: 'text', text: 'Paris' },
    }));
  if ('roots' in capabilities)
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///bridged-root' }] }));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gw.url + path), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;
const CAPABLE = { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } };

describe('input_required results bridged for a legacy client', () => {
  for (const endpoint of ['unified', 'proxy'] as const) {
    const path = () => (endpoint === 'unified' ? '/api/v1/mcp/mcp' : `/api/v1/mcp-proxy/${providerId}/mcp`);

    it(`${endpoint} endpoint: elicitation, sampling and roots are asked on the call stream and the call completes`, async () => {
      const client = await legacyClient(path(), CAPABLE);
      expect(textOf(await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }))).toBe(
        'Hello, Ada!',
      );
      expect(textOf(await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} }))).toBe(
        'Model said: Paris',
      );
      expect(textOf(await client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} }))).toBe(
        'Roots: file:///bridged-root',
      );
      await client.close();
    });

    it(`${endpoint} endpoint: requestState goes back verbatim (the upstream verifies its HMAC)`, async () => {
      const client = await legacyClient(path(), CAPABLE);
      expect(textOf(await client.callTool({ name: 'test_input_required_result_request_state', arguments: {} }))).toBe(
        'state-ok: confirmed={"ok":true}',
      );
      await client.close();
    });
  }

  it('refuses (-32021) a request the client has no capability for', async () => {
    const client = await legacyClient('/api/v1/mcp/mcp', { roots: {} });
    await expect(client.callTool({ name: 'test_input_required_result_sampling', arguments: {} })).rejects.toThrow(
      /sampling/,
    );
    await client.close();
  });
});
