import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { McpUpstreamError } from './errors.js';
import { MODERN_PROTOCOL_VERSION } from './protocol.js';
import { McpUpstreamClient } from './upstream-client.js';

/** A hostile upstream: every tools/list page carries `perPage` tools and a next cursor, forever. */
async function endlessLister(perPage: number) {
  let pages = 0;
  const http = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { id } = JSON.parse(body) as { id: number };
      pages += 1;
      const tools = Array.from({ length: perPage }, (_, i) => ({
        name: `tool_${pages}_${i}`,
        inputSchema: { type: 'object' },
      }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { tools, nextCursor: `page-${pages}` } }));
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    pages: () => pages,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((r) => http.close(() => r()));
    },
  };
}

describe('McpUpstreamClient.listAll caps what an upstream may list', () => {
  const open: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((o) => o.close()));
  });
  const session = { protocolVersion: MODERN_PROTOCOL_VERSION, sessionId: null };

  it('stops with too_large past maxItems instead of collecting an endless tools list', async () => {
    const upstream = await endlessLister(50);
    const client = new McpUpstreamClient();
    open.push(upstream, { close: () => client.destroy() });
    const err = await client
      .listAll({ endpoint: upstream.url }, 'tools/list', 'tools', { session, maxItems: 120 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUpstreamError);
    expect((err as McpUpstreamError).kind).toBe('too_large');
    expect(upstream.pages()).toBe(3);
  });

  it('stops following cursors of empty pages after a bounded number of pages', async () => {
    const upstream = await endlessLister(0);
    const client = new McpUpstreamClient();
    open.push(upstream, { close: () => client.destroy() });
    const err = await client
      .listAll({ endpoint: upstream.url }, 'tools/list', 'tools', { session })
      .catch((e: unknown) => e);
    expect((err as McpUpstreamError).kind).toBe('too_large');
    expect(upstream.pages()).toBeLessThanOrEqual(1_002);
  });
});
