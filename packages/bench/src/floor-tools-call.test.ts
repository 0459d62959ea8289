import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// An MCP upstream that answers a tools/call with what reached it, so the test sees what the floor forwarded.
function recordingUpstream(): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number };
      const seen = {
        url: req.url,
        name: req.headers['mcp-name'],
        body: JSON.parse(JSON.stringify(message)) as unknown,
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: message.id,
          result: { content: [{ type: 'text', text: JSON.stringify(seen) }] },
        }),
      );
    });
  });
}

describe('the floor of a unified tools/call', () => {
  const upstream = recordingUpstream();
  let floor: ChildProcess;
  let base = '';
  const call = (token: string, name: string) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'client-7',
        method: 'tools/call',
        params: { name, arguments: { x: 1 } },
      }),
    });

  beforeAll(async () => {
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const mcpUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
    floor = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('./floor-tools-call.ts', import.meta.url)), mcpUrl, 'floor-token'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [line] = (await once(createInterface({ input: floor.stdout! }), 'line')) as [string];
    base = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
  });

  afterAll(async () => {
    floor.kill('SIGTERM');
    await once(floor, 'exit');
    upstream.close();
  });

  it('forwards an allowed call under its upstream name with an id of its own, and answers with the client id', async () => {
    const res = await call('floor-token', 'echo');
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { id: string; result: { content: [{ text: string }] } };
    expect(answer.id).toBe('client-7');
    const seen = JSON.parse(answer.result.content[0].text) as {
      url: string;
      name: string;
      body: Record<string, unknown>;
    };
    expect(seen.url).toBe('/mcp');
    expect(seen.name).toBe('echo');
    expect(seen.body).toMatchObject({ method: 'tools/call', params: { name: 'echo', arguments: { x: 1 } } });
    expect(typeof seen.body.id).toBe('number');
  });

  it('refuses an unknown token (401) and a tool the table does not allow (403)', async () => {
    expect((await call('other-token', 'echo')).status).toBe(401);
    expect((await call('floor-token', 'delete_everything')).status).toBe(403);
  });
});
