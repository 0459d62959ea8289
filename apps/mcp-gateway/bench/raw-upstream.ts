import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A raw JSON-RPC MCP upstream on plain node:http (no SDK): stateless 2026-07-28, answers
// server/discover, tools/list and tools/call with an echo. The benchmark's "direct" baseline.
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let message: { id?: unknown; method?: string; params?: { arguments?: unknown } };
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof message;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
      return;
    }
    let result: Record<string, unknown>;
    if (message.method === 'server/discover') result = { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete', ttlMs: 0, cacheScope: 'private' };
    else if (message.method === 'tools/list') result = { tools: [{ name: 'echo', inputSchema: { type: 'object' } }], resultType: 'complete', ttlMs: 0, cacheScope: 'private' };
    else if (message.method === 'tools/call') result = { content: [{ type: 'text', text: JSON.stringify(message.params?.arguments ?? {}) }], resultType: 'complete' };
    else if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    } else result = {};
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
