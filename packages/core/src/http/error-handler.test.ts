import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConflictError, CredentialsRequiredError, RateLimitedError } from '../errors.js';
import { errorHandler, notFoundHandler, parseJson, parseQuery, requestId } from './index.js';

const item = z.object({
  name: z.string().min(1),
  count: z.number().int(),
  owner: z.object({ email: z.email() }).optional(),
});

function testApp() {
  const logLines: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => logLines.push(line) });
  const app = new Hono();
  app.use(requestId());
  app.onError(errorHandler(logger));
  app.notFound(notFoundHandler);
  app.post('/items', async (c) => c.json(await parseJson(c, item), 201));
  app.post('/small', bodyLimit({ maxSize: 16 }), async (c) => c.json(await parseJson(c, z.object({}).loose())));
  app.get('/search', (c) => c.json(parseQuery(c, z.object({ limit: z.coerce.number().int().max(100) }))));
  app.get('/zod', (c) => c.json(z.object({ id: z.uuid() }).parse({ id: 'nope' })));
  app.get('/conflict', () => {
    throw new ConflictError('Email already registered', 'EMAIL_TAKEN');
  });
  app.get('/slow-down', () => {
    throw new RateLimitedError('Too many requests', 30);
  });
  app.get('/credentials', () => {
    throw new CredentialsRequiredError(['github'], { github: 'https://gw/oauth/github' });
  });
  app.get('/nul', () => {
    throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
  });
  app.get('/bug', () => {
    throw new Error('connection to postgres://admin:hunter2@db failed');
  });
  return { app, logLines };
}

const post = (body: string) => ({ method: 'POST', body, headers: { 'content-type': 'application/json' } });

describe('error handling over HTTP', () => {
  it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
    const { app } = testApp();
    const res = await app.request('/items', post('{"name": '));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Malformed JSON body' });
  });

  it('answers a schema failure with 400 naming the field', async () => {
    const { app } = testApp();
    const res = await app.request('/items', post(JSON.stringify({ name: 'x', count: 1.5 })));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string; field: string; issues: { field: string }[] };
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.field).toBe('count');
    expect(body.message).toMatch(/^count: /);
    expect(body.issues.map((i) => i.field)).toEqual(['count']);
  });

  it('names a nested field by its dotted path, and every failing field', async () => {
    const { app } = testApp();
    const res = await app.request('/items', post(JSON.stringify({ name: '', count: 1, owner: { email: 'nope' } })));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { issues: { field: string }[] };
    expect(body.issues.map((i) => i.field).sort()).toEqual(['name', 'owner.email']);
  });

  it('accepts a valid body', async () => {
    const { app } = testApp();
    const res = await app.request('/items', post(JSON.stringify({ name: 'x', count: 2 })));
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ name: 'x', count: 2 });
  });

  it('validates the query string', async () => {
    const { app } = testApp();
    const bad = await app.request('/search?limit=1000');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'limit' });
    const good = await app.request('/search?limit=10');
    expect(await good.json()).toEqual({ limit: 10 });
  });

  it('maps a thrown ZodError to 400', async () => {
    const { app } = testApp();
    const res = await app.request('/zod');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'id' });
  });

  it('answers an AppError with its status and body', async () => {
    const { app } = testApp();
    const res = await app.request('/conflict');
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ code: 'EMAIL_TAKEN', message: 'Email already registered' });

    const creds = await app.request('/credentials');
    expect(creds.status).toBe(401);
    expect(await creds.json()).toEqual({
      code: 'CREDENTIALS_REQUIRED',
      message: 'Missing credentials: github',
      missing: ['github'],
      authUrls: { github: 'https://gw/oauth/github' },
    });
  });

  it('sets Retry-After on 429', async () => {
    const { app } = testApp();
    const res = await app.request('/slow-down');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(await res.json()).toEqual({ code: 'RATE_LIMITED', message: 'Too many requests', retryAfter: 30 });
  });

  it('answers a body over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const { app } = testApp();
    const res = await app.request('/small', post(JSON.stringify({ text: 'x'.repeat(100) })));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'Request body too large' });
  });

  it('answers an unknown error with 500 and a request id only, and logs it under that id', async () => {
    const { app, logLines } = testApp();
    const res = await app.request('/bug');
    expect(res.status).toBe(500);
    const text = await res.text();
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['code', 'message', 'requestId']);
    expect(body).toMatchObject({ code: 'INTERNAL_ERROR', message: 'Internal server error' });
    expect(body.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('postgres');
    expect(text).not.toContain('at ');
    expect(logLines).toHaveLength(1);
    expect(JSON.parse(logLines[0]!)).toMatchObject({ requestId: body.requestId, msg: 'unhandled error' });
  });

  it('answers a database data exception (SQLSTATE class 22) with 400, without the database message', async () => {
    const { app } = testApp();
    const res = await app.request('/nul');
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(JSON.stringify(body)).not.toContain('UTF8');
  });

  it('answers an unknown route with 404 in the same body shape', async () => {
    const { app } = testApp();
    const res = await app.request('/nowhere');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 'NOT_FOUND', message: 'No route for GET /nowhere' });
  });
});
