import { NotFoundError } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { createServiceApp } from './service-app.js';

describe('createServiceApp', () => {
  const app = createServiceApp({ maxBodyBytes: 1024 });
  app.post('/echo', async (c) => c.json({ size: (await c.req.text()).length }));
  app.get('/missing', () => {
    throw new NotFoundError('Agent');
  });
  app.get('/boom', () => {
    throw new Error('secret detail');
  });

  it('accepts a body within the limit', async () => {
    const res = await app.request('/echo', { method: 'POST', body: 'x'.repeat(1024) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ size: 1024 });
  });

  it('answers 413 with the error body when the body is too large', async () => {
    const res = await app.request('/echo', { method: 'POST', body: 'x'.repeat(1025) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'Request body too large' });
  });

  it('uses 1 MiB by default', async () => {
    const defaults = createServiceApp();
    defaults.post('/echo', async (c) => c.json({ size: (await c.req.text()).length }));
    expect((await defaults.request('/echo', { method: 'POST', body: 'x'.repeat(1024 * 1024) })).status).toBe(200);
    expect((await defaults.request('/echo', { method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) })).status).toBe(413);
  });

  it('maps AppErrors, unknown routes and unexpected errors to the one error body', async () => {
    const missing = await app.request('/missing');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ code: 'NOT_FOUND', message: 'Agent not found' });

    const noRoute = await app.request('/nope');
    expect(noRoute.status).toBe(404);
    expect(await noRoute.json()).toMatchObject({ code: 'NOT_FOUND' });

    const boom = await app.request('/boom');
    expect(boom.status).toBe(500);
    const body = (await boom.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'INTERNAL_ERROR', message: 'Internal server error' });
    expect(body.requestId).toMatch(/^req_/);
    expect(JSON.stringify(body)).not.toContain('secret detail');
  });
});
