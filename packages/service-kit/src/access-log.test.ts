import { hashPassword, jwtAuth } from '@agentgw/auth';
import { createLogger, newId, type Logger } from '@agentgw/core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { annotateAccessLog } from './access-log.js';
import { createHost } from './host.js';
import { openApiApp } from './route-kit.js';
import { defineService } from './service-definition.js';
import { createTestDeps, listening, TRANSPORTS, type TestDeps, type Transport } from './testing.js';

type Line = Record<string, unknown>;

/** An info logger whose lines land in `lines`, as the host's deps would carry it. */
function capturingLogger(): { logger: Logger; lines: Line[]; raw: string[] } {
  const lines: Line[] = [];
  const raw: string[] = [];
  const logger = createLogger({
    level: 'info',
    destination: { write: (s: string) => void (raw.push(s), lines.push(JSON.parse(s) as Line)) },
  });
  return { logger, lines, raw };
}

/** Routes behind real JWT auth, one that annotates its line like MCP does, and a slow stream. */
const things = defineService({
  name: 'things',
  defaultPort: 0,
  create: (deps) => {
    const routes = openApiApp();
    routes.use('/api/v1/things/*', jwtAuth(deps.auth));
    routes.get('/api/v1/things/:id', (c) => c.json({ id: c.req.param('id') }));
    routes.post('/api/v1/open/rpc', (c) => {
      annotateAccessLog(c, { rpcMethod: 'tools/call', toolName: 'search', rpcBatch: 2 });
      return c.json({ ok: true });
    });
    routes.get('/api/v1/open/stream', () => {
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          controller.enqueue(new TextEncoder().encode(`data: ${sent}\n\n`));
          if (++sent === 3) controller.close();
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    });
    return { routes };
  },
});

const SECRETS = {
  query: 'query-secret-0123456789',
  apiKey: 'agw_apikey-secret-0123456789',
  cookie: 'cookie-secret-0123456789',
};

describe('access log', () => {
  let deps: TestDeps;
  let token: string;
  let userId: string;
  beforeAll(async () => {
    deps = await createTestDeps();
    userId = newId();
    await deps.db
      .insertInto('users')
      .values({
        id: userId,
        email: 'log@example.com',
        password_hash: await hashPassword('password-123'),
        name: null,
        tenant_id: null,
        roles: [],
      })
      .execute();
    token = await deps.auth.signUserToken({ id: userId, email: 'log@example.com', roles: [], tenantId: null });
  });
  afterAll(() => deps.close());
  afterEach(() => vi.restoreAllMocks());

  /** Waits for the line of `path` (over a socket it is written when the answer has been sent). */
  const lineOf = async (lines: Line[], path: string): Promise<Line> => {
    await expect.poll(() => lines.find((l) => l.path === path)).toBeDefined();
    return lines.find((l) => l.path === path)!;
  };

  describe.each(Object.entries(TRANSPORTS))('over %s', (name, connect) => {
    let transport: Transport;
    let capture: ReturnType<typeof capturingLogger>;
    beforeAll(async () => {
      capture = capturingLogger();
      const host = await createHost([things], { ...deps, logger: capture.logger }, { name: 'things' });
      transport = await connect(host.app);
    });
    afterAll(() => transport.close());

    it('writes one info line per request: method, route pattern, path, status, duration, request id, caller, bytes', async () => {
      const res = await transport.request('/api/v1/things/42', { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      await res.text();
      const line = await lineOf(capture.lines, '/api/v1/things/42');
      expect(line).toMatchObject({
        level: 30,
        msg: 'request',
        method: 'GET',
        route: '/api/v1/things/:id',
        status: 200,
        principal: 'user',
        principalId: userId,
      });
      expect(line.requestId).toEqual(expect.any(String));
      expect(line.durationMs).toEqual(expect.any(Number));
      if (name === 'socket') expect(line.bytesOut).toBeGreaterThan('{"id":"42"}'.length);
      expect(capture.lines.filter((l) => l.path === '/api/v1/things/42')).toHaveLength(1);
    });

    it('logs refusals and 404s too, without a caller when none was proved', async () => {
      expect((await transport.request('/api/v1/things/7')).status).toBe(401);
      expect(await lineOf(capture.lines, '/api/v1/things/7')).not.toHaveProperty('principal');
      expect((await lineOf(capture.lines, '/api/v1/things/7')).status).toBe(401);
      expect((await transport.request('/api/v1/nowhere')).status).toBe(404);
      expect(await lineOf(capture.lines, '/api/v1/nowhere')).toMatchObject({ status: 404, route: 'unmatched' });
    });

    it('never writes a secret: no header, no query value, no body', async () => {
      const res = await transport.request(`/api/v1/open/rpc?token=${SECRETS.query}&api_key=${SECRETS.query}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'x-api-key': SECRETS.apiKey,
          cookie: `session=${SECRETS.cookie}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ password: SECRETS.cookie }),
      });
      expect(res.status).toBe(200);
      const line = await lineOf(capture.lines, '/api/v1/open/rpc');
      expect(line).toMatchObject({
        method: 'POST',
        status: 200,
        rpcMethod: 'tools/call',
        toolName: 'search',
        rpcBatch: 2,
      });
      // fetch sends Content-Length; app.request's Request carries none.
      if (name === 'socket') expect(line.bytesIn).toBe(JSON.stringify({ password: SECRETS.cookie }).length);
      const written = capture.raw.join('');
      for (const secret of [...Object.values(SECRETS), token]) expect(written).not.toContain(secret);
    });
  });

  it('logs a stream when it ends, with its whole duration and bytes', async () => {
    const capture = capturingLogger();
    const host = await createHost([things], { ...deps, logger: capture.logger }, { name: 'things' });
    const transport = await listening(host.app);
    try {
      // The log's clock (performance) is faked: it moves only when the test moves it, after the answer began.
      vi.useFakeTimers({ toFake: ['performance'] });
      const res = await transport.request('/api/v1/open/stream');
      const reader = res.body!.getReader();
      await reader.read(); // the stream is open: no line yet
      expect(capture.lines.find((l) => l.path === '/api/v1/open/stream')).toBeUndefined();
      vi.advanceTimersByTime(60_000);
      while (!(await reader.read()).done);
      const line = await lineOf(capture.lines, '/api/v1/open/stream');
      expect(line).toMatchObject({ status: 200, route: '/api/v1/open/stream' });
      // The minute the clock moved while the stream ran is in it: timed to the stream's end, not its headers.
      expect(line.durationMs).toBeGreaterThanOrEqual(60_000);
      expect(line.bytesOut).toBeGreaterThan(3 * 'data: 0\n\n'.length);
      expect(line).not.toHaveProperty('aborted');
    } finally {
      vi.useRealTimers();
      await transport.close();
    }
  });

  it('writes nothing with ACCESS_LOG=off or a 0 sample, and samples the given share', async () => {
    for (const env of [{ ACCESS_LOG: 'off' as const }, { ACCESS_LOG_SAMPLE: 0 }]) {
      const capture = capturingLogger();
      const host = await createHost(
        [things],
        { ...deps, logger: capture.logger, config: { ...deps.config, ...env } },
        { name: 'things' },
      );
      expect((await host.app.request('/api/v1/open/rpc', { method: 'POST' })).status).toBe(200);
      expect(capture.lines).toEqual([]);
    }
    const capture = capturingLogger();
    const host = await createHost(
      [things],
      { ...deps, logger: capture.logger, config: { ...deps.config, ACCESS_LOG_SAMPLE: 0.25 } },
      { name: 'things' },
    );
    const random = vi.spyOn(Math, 'random');
    for (const draw of [0.1, 0.3, 0.9, 0.2]) {
      random.mockReturnValueOnce(draw);
      await host.app.request('/api/v1/open/rpc', { method: 'POST' });
    }
    expect(capture.lines).toHaveLength(2);
  });
});
