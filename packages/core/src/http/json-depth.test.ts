import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorHandler } from './error-handler.js';
import { assertJsonDepth, jsonDepthLimit, MAX_JSON_DEPTH } from './json-depth.js';
import { parseJson } from './validate.js';

const nested = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

function testApp() {
  const app = new Hono();
  app.onError(errorHandler());
  const seen: unknown[] = [];
  app.post('/mw', jsonDepthLimit(), async (c) => {
    seen.push(await c.req.json());
    return c.json({ ok: true });
  });
  app.post('/parse', async (c) => c.json(await parseJson(c, z.unknown())));
  app.post('/text', jsonDepthLimit(), async (c) => c.json(JSON.parse(await c.req.text()) as unknown));
  return { app, seen };
}

const post = (body: string) => ({ method: 'POST', body, headers: { 'content-type': 'application/json' } });

describe('JSON nesting cap', () => {
  it('refuses a body nested past the cap with 400 before the handler runs', async () => {
    const { app, seen } = testApp();
    const res = await app.request('/mw', post(nested(100_000)));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'VALIDATION_ERROR',
      message: `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`,
      field: '(body)',
    });
    expect(seen).toHaveLength(0);
  });

  it('lets a body at the cap through, and the handler still reads it', async () => {
    const { app, seen } = testApp();
    const res = await app.request('/mw', post(nested(MAX_JSON_DEPTH)));
    expect(res.status).toBe(200);
    expect(seen).toHaveLength(1);
    expect((await app.request('/mw', post(nested(MAX_JSON_DEPTH + 1)))).status).toBe(400);
  });

  it('leaves the body readable through c.req for the handler (the text it checked)', async () => {
    const { app } = testApp();
    const res = await app.request('/text', post('{"jsonrpc":"2.0","id":1}'));
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 1 });
  });

  it('applies in parseJson too, and arrays count as levels', async () => {
    const { app } = testApp();
    const res = await app.request('/parse', post('['.repeat(5_000) + ']'.repeat(5_000)));
    expect(res.status).toBe(400);
    expect((await app.request('/parse', post('[[1]]'))).status).toBe(200);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(() => assertJsonDepth(JSON.stringify({ s: '{'.repeat(500) + '"\\[' }), 2)).not.toThrow();
    expect(() => assertJsonDepth('{"a":{"b":{}}}', 2)).toThrow(/deeper than 2/);
    expect(() => assertJsonDepth('["\\\\", [[]]]', 2)).toThrow(/deeper than 2/);
  });

  it('leaves skipped requests to the route, whose parseJson still refuses a deep body', async () => {
    const app = new Hono();
    app.onError(errorHandler());
    app.post('/own', jsonDepthLimit({ skip: (c) => c.req.path === '/own' }), (c) => c.json({ ok: true }));
    app.post('/own-parse', jsonDepthLimit({ skip: () => true }), async (c) => c.json(await parseJson(c, z.unknown())));
    expect((await app.request('/own', post(nested(500)))).status).toBe(200);
    expect((await app.request('/own-parse', post(nested(500)))).status).toBe(400);
  });

  it('ignores bodies that are not JSON', async () => {
    const app = new Hono();
    app.onError(errorHandler());
    app.post('/plain', jsonDepthLimit(), async (c) => c.text(await c.req.text()));
    const res = await app.request('/plain', {
      method: 'POST',
      body: nested(500),
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(200);
  });
});
