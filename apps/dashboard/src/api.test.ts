import { describe, expect, it, vi } from 'vitest';
import { ApiError, createApiClient, describeError, errorFromResponse } from './api.js';

describe('errorFromResponse', () => {
  it('keeps the gateway error body: code, message and details', () => {
    const err = errorFromResponse(
      401,
      JSON.stringify({
        code: 'CREDENTIALS_REQUIRED',
        message: 'Connect first.',
        missing: ['github'],
        authUrls: { github: '/credentials?serviceType=github' },
      }),
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(401);
    expect(err.code).toBe('CREDENTIALS_REQUIRED');
    expect(err.message).toBe('Connect first.');
    expect(err.details).toEqual({ missing: ['github'], authUrls: { github: '/credentials?serviceType=github' } });
  });

  it('words a status whose body is not the error body (HTML from a proxy, empty, or malformed)', () => {
    expect(errorFromResponse(502, '<html>Bad Gateway</html>').message).toBe('The upstream server failed. (HTTP 502)');
    expect(errorFromResponse(404, '').code).toBe('HTTP_404');
    expect(errorFromResponse(418, '{"code":1}').message).toBe('The request failed. (HTTP 418)');
    expect(errorFromResponse(599, '[]').message).toBe('The gateway failed to answer this request. (HTTP 599)');
  });
});

describe('describeError', () => {
  it('names the field of a validation error and the missing credentials', () => {
    expect(describeError(new ApiError(400, 'VALIDATION_ERROR', 'must be a URL', { field: 'upstreamUrl' }))).toBe(
      'upstreamUrl: must be a URL',
    );
    expect(
      describeError(
        new ApiError(401, 'CREDENTIALS_REQUIRED', 'Credentials are required.', { missing: ['github', 'jira'] }),
      ),
    ).toBe('Credentials are required. Missing: github, jira.');
  });

  it('says the gateway is unreachable on a network failure', () => {
    expect(describeError(new TypeError('Failed to fetch'))).toMatch(/could not be reached/);
    expect(describeError('boom')).toBe('Something went wrong.');
  });
});

describe('createApiClient', () => {
  it('sends JSON to /api/v1 with the session cookie, never a JWT of its own, and parses the answer', async () => {
    const fetch = vi.fn(async () => new Response(JSON.stringify({ ok: true }), { status: 200 }));
    const api = createApiClient({ signedIn: () => true, fetch });
    await expect(api.post('/admin/agents', { name: 'a' })).resolves.toEqual({ ok: true });
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api/v1/admin/agents');
    expect(init.method).toBe('POST');
    expect(init.body).toBe('{"name":"a"}');
    expect(init.credentials).toBe('same-origin');
    const headers = new Headers(init.headers);
    expect(headers.get('authorization')).toBeNull();
    expect(headers.get('content-type')).toBe('application/json');
  });

  it('ends the session on a 401 to an authenticated call, not on a failed sign-in', async () => {
    const onUnauthorized = vi.fn();
    const fetch = vi.fn(async () => new Response('{"code":"UNAUTHORIZED","message":"Token expired"}', { status: 401 }));
    let signedIn = true;
    const api = createApiClient({ signedIn: () => signedIn, onUnauthorized, fetch });
    await expect(api.get('/admin/agents')).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: 'Token expired' });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    signedIn = false;
    await expect(api.post('/auth/login', {})).rejects.toBeInstanceOf(ApiError);
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
  });
});
