import { createServer } from 'node:http';
import { serveOnLoopback } from './loopback-server.js';

// A raw JSON-RPC MCP server on plain node:http (no SDK), stateless 2026-07-28: server/discover,
// initialize, tools/list and tools/call (echo). The "direct" baseline of the MCP cases.
const TOOLS = [{ name: 'echo', description: 'Echoes its arguments', inputSchema: { type: 'object' } }];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let message: { id?: unknown; method?: string; params?: { arguments?: unknown; protocolVersion?: string } };
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof message;
    } catch {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
      return;
    }
    let result: Record<string, unknown>;
    switch (message.method) {
      case 'server/discover':
        result = {
          supportedVersions: ['2026-07-28'],
          capabilities: { tools: {} },
          resultType: 'complete',
          ttlMs: 0,
          cacheScope: 'private',
        };
        break;
      case 'initialize':
        result = {
          protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'bench-upstream', version: '1.0.0' },
        };
        break;
      case 'tools/list':
        result = { tools: TOOLS, resultType: 'complete', ttlMs: 0, cacheScope: 'private' };
        break;
      case 'tools/call':
        result = {
          content: [{ type: 'text', text: JSON.stringify(message.params?.arguments ?? {}) }],
          resultType: 'complete',
        };
        break;
      default:
        if (message.id === undefined) {
          res.writeHead(202).end();
          return;
        }
        result = {};
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  });
});
serveOnLoopback(server);
