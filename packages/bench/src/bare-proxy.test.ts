import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// An upstream that echoes what reached it, so the test sees what the proxy forwarded.
function echoUpstream(): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = {
        method: req.method,
        url: req.url,
        auth: req.headers.authorization,
        connection: req.headers.connection,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' }).end(JSON.stringify(seen));
    });
  });
}

async function startProxy(origin: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./bare-proxy.ts', import.meta.url)), origin],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return { child, base: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}` };
}

describe('bare proxy', () => {
  const upstream = echoUpstream();
  let proxy: { child: ChildProcess; base: string };

  beforeAll(async () => {
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    proxy = await startProxy(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
    upstream.close();
  });

  it('forwards method, path, end-to-end headers and body, and answers with the upstream status, headers and body', async () => {
    const res = await fetch(`${proxy.base}/mcp?x=1`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-upstream')).toBe('yes');
    expect(await res.json()).toEqual({
      method: 'POST',
      url: '/mcp?x=1',
      auth: 'Bearer t',
      connection: 'keep-alive',
      body: '{"a":1}',
    });
  });

  it('answers 502 when the upstream is gone', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const orphan = await startProxy(`http://127.0.0.1:${port}`);
    try {
      expect((await fetch(`${orphan.base}/run`, { method: 'POST', body: '{}' })).status).toBe(502);
    } finally {
      orphan.child.kill('SIGTERM');
      await once(orphan.child, 'exit');
    }
  });
});
