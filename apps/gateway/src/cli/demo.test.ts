import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { demoCommand } from './demo.js';

let server: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  if (dir) rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

describe('gateway demo', () => {
  it('waits for a busy gateway whose /health takes seconds instead of calling it absent', async () => {
    // A loaded machine: /health answers after 3 s (the README's Try it once failed here with "No gateway answers").
    const seen: string[] = [];
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/health') return void setTimeout(() => res.end('{"status":"ok"}'), 3_000);
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Invalid credentials"}');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'gateway-demo-'));
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const run = demoCommand({ cwd: dir, processEnv: {} }, { url, email: 'a@example.com', password: 'wrong-one' });
    await expect(run).rejects.toThrow('POST /auth/login answered 401: Invalid credentials');
    expect(seen).toEqual(['GET /health', 'POST /api/v1/auth/login']);
    expect(errors).not.toHaveBeenCalledWith(expect.stringContaining('No gateway answers'));
  }, 30_000);
});
