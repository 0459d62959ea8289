import { AppError, ManualClock } from '@agentgw/core';
import { freePort } from '@agentgw/testkit';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExchangeServer, ExchangeSubjects } from './exchange-subjects.js';
import {
  TOKEN_EXCHANGE_GRANT,
  TokenExchange,
  type ExchangeRefusal,
  type TokenExchangeConfig,
} from './token-exchange.js';

/**
 * oidc-provider has no RFC 8693 grant without a custom grant handler, so the authorization
 * server here is a small loopback token endpoint that checks the RFC 8693 request itself: the
 * grant type, client authentication, subject token and type, audience, resource and scope.
 */
describe('TokenExchange (RFC 8693)', () => {
  let server: Server;
  let tokenUrl = '';
  const requests: Record<string, string>[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const params = Object.fromEntries(new URLSearchParams(body));
        requests.push({ ...params, authorization: req.headers.authorization ?? '' });
        const json = (status: number, value: unknown) =>
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
        const clientOk = req.headers.authorization === `Basic ${Buffer.from('gateway:gwsecret').toString('base64')}`;
        if (!clientOk) return json(401, { error: 'invalid_client' });
        if (
          params.grant_type !== TOKEN_EXCHANGE_GRANT ||
          params.subject_token_type !== 'urn:ietf:params:oauth:token-type:jwt'
        )
          return json(400, { error: 'unsupported_grant_type' });
        if (!params.subject_token?.startsWith('signin-')) return json(400, { error: 'invalid_grant' });
        json(200, {
          access_token: `upstream-for-${params.subject_token}-${requests.length}`,
          issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          token_type: 'Bearer',
          expires_in: 300,
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    tokenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const cfg = (): TokenExchangeConfig => ({
    server: { kind: 'token_url', tokenUrl },
    client: { clientId: 'gateway', clientSecret: 'gwsecret' },
    audience: 'crm',
    resource: 'https://crm.example/mcp',
    scope: 'crm:read',
  });
  const jwt = (token: string) => ({ token, type: 'urn:ietf:params:oauth:token-type:jwt' as const });
  /** The STSs subject tokens were asked for; the fake shows each the caller's bearer (the gateway mints one: exchange-subjects.test.ts). */
  const asked: ExchangeServer[] = [];
  const subjects: ExchangeSubjects = { subjectFor: async (caller, sts) => (asked.push(sts), jwt(caller.bearer)) };
  const as = (userId: string, bearer: string) => ({ userId, tenantId: null, bearer, clientId: null });
  /** The refusals the exchange recorded (identity events in a gateway process). */
  const refusals: ExchangeRefusal[] = [];
  const record = async (refusal: ExchangeRefusal) => void refusals.push(refusal);

  it('sends the RFC 8693 request and reuses the result per user until shortly before it expires', async () => {
    requests.length = 0;
    const clock = new ManualClock();
    const exchange = new TokenExchange(fetch, clock, subjects, record);
    const first = await exchange.accessTokenFor('p1', as('alice', 'signin-alice'), cfg());
    expect(first).toBe('upstream-for-signin-alice-1');
    expect(asked.at(-1)).toEqual({ issuer: null, audience: tokenUrl });
    expect(requests[0]).toMatchObject({
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: 'signin-alice',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      audience: 'crm',
      resource: 'https://crm.example/mcp',
      scope: 'crm:read',
    });
    expect(await exchange.accessTokenFor('p1', as('alice', 'signin-alice'), cfg())).toBe(first);
    expect(requests).toHaveLength(1);
    // Another user, or the same user signed in anew, is exchanged on its own.
    expect(await exchange.accessTokenFor('p1', as('bob', 'signin-bob'), cfg())).toBe('upstream-for-signin-bob-2');
    expect(await exchange.accessTokenFor('p1', as('alice', 'signin-alice-2'), cfg())).toBe(
      'upstream-for-signin-alice-2-3',
    );
    // 300 s lifetime less the skew: still reused at 269 s, exchanged again at 271 s.
    clock.advance(269_000);
    expect(await exchange.accessTokenFor('p1', as('alice', 'signin-alice'), cfg())).toBe(first);
    clock.advance(2_000);
    expect(await exchange.accessTokenFor('p1', as('alice', 'signin-alice'), cfg())).toBe('upstream-for-signin-alice-4');
  });

  it('answers a refused exchange as 403 TOKEN_EXCHANGE_REFUSED, records each refusal (no token in it) and caches nothing', async () => {
    requests.length = 0;
    refusals.length = 0;
    const exchange = new TokenExchange(fetch, new ManualClock(), subjects, record);
    const refusal = await exchange.accessTokenFor('p1', as('mallory', 'forged'), cfg()).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ status: 403, code: 'TOKEN_EXCHANGE_REFUSED' });
    await exchange.accessTokenFor('p1', as('mallory', 'forged'), cfg()).catch(() => undefined);
    expect(requests).toHaveLength(2);
    const badClient = await exchange
      .accessTokenFor('p1', as('alice', 'signin-alice'), {
        ...cfg(),
        client: { clientId: 'gateway', clientSecret: 'wrong' },
      })
      .catch((err: unknown) => err);
    expect(badClient).toMatchObject({ status: 403, code: 'TOKEN_EXCHANGE_REFUSED' });
    expect(refusals.map((r) => [r.providerId, r.caller.userId, r.reason, r.message])).toEqual([
      ['p1', 'mallory', 'TOKEN_EXCHANGE_REFUSED', expect.stringContaining('invalid_grant')],
      ['p1', 'mallory', 'TOKEN_EXCHANGE_REFUSED', expect.stringContaining('invalid_grant')],
      ['p1', 'alice', 'TOKEN_EXCHANGE_REFUSED', expect.stringContaining('invalid_client')],
    ]);
    expect(JSON.stringify(refusals.map(({ reason, message }) => ({ reason, message })))).not.toMatch(/forged|signin-/);
  });

  it('refuses a token endpoint reached in clear over a network, and a server that is down is a 502', async () => {
    const exchange = new TokenExchange(fetch, new ManualClock(), subjects, record);
    const insecure = { ...cfg(), server: { kind: 'token_url' as const, tokenUrl: 'http://as.example/token' } };
    await expect(exchange.accessTokenFor('p1', as('alice', 'signin-alice'), insecure)).rejects.toMatchObject({
      status: 502,
    });
    const down = {
      ...cfg(),
      server: { kind: 'token_url' as const, tokenUrl: `http://127.0.0.1:${await freePort()}/token` },
    };
    await expect(exchange.accessTokenFor('p1', as('alice', 'signin-alice'), down)).rejects.toMatchObject({
      status: 502,
      code: 'OAUTH_TOKEN_EXCHANGE_FAILED',
    });
    expect(refusals.slice(-2).map((r) => r.reason)).toEqual([expect.any(String), 'OAUTH_TOKEN_EXCHANGE_FAILED']);
  });
});
