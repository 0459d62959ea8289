import { describe, expect, it } from 'vitest';
import { ApiError } from '../api.js';
import {
  describeTokenExchange,
  EMPTY_TOKEN_EXCHANGE,
  tokenExchangeBody,
  tokenExchangeDraftOf,
  tokenExchangeFieldError,
  tokenExchangeUpdateBody,
} from './token-exchange-form.js';

describe('tokenExchangeBody', () => {
  it('sends the token endpoint, the client and only the optionals that were filled in', () => {
    expect(
      tokenExchangeBody({
        ...EMPTY_TOKEN_EXCHANGE,
        serverUrl: ' https://as.example/token ',
        clientId: ' gw ',
        scope: 'read',
      }),
    ).toEqual({
      tokenUrl: 'https://as.example/token',
      clientId: 'gw',
      scope: 'read',
    });
  });

  it('sends the issuer instead of a token endpoint, and the secret as typed', () => {
    const body = tokenExchangeBody({
      serverKind: 'issuer',
      serverUrl: 'https://as.example',
      clientId: 'gw',
      clientSecret: ' s3cret ',
      audience: 'api',
      resource: 'https://api.example',
      scope: ' ',
    });
    expect(body).toEqual({
      issuer: 'https://as.example',
      clientId: 'gw',
      clientSecret: ' s3cret ',
      audience: 'api',
      resource: 'https://api.example',
    });
    expect(body).not.toHaveProperty('tokenUrl');
  });
});

describe('tokenExchangeFieldError', () => {
  const invalid = (field: string, message: string) => new ApiError(400, 'VALIDATION_ERROR', message, { field });

  it('puts a refused URL (either kind) on the authorization-server field, without the repeated field name', () => {
    expect(
      tokenExchangeFieldError(
        invalid('tokenExchange.tokenUrl', 'tokenExchange.tokenUrl: give exactly one of tokenUrl and issuer'),
      ),
    ).toEqual({
      field: 'serverUrl',
      message: 'give exactly one of tokenUrl and issuer',
    });
    expect(tokenExchangeFieldError(invalid('tokenExchange.issuer', 'egress policy refuses this host'))).toEqual({
      field: 'serverUrl',
      message: 'egress policy refuses this host',
    });
  });

  it('maps each other tokenExchange field and the missing section', () => {
    expect(tokenExchangeFieldError(invalid('tokenExchange.clientId', 'tokenExchange.clientId: Required'))).toEqual({
      field: 'clientId',
      message: 'Required',
    });
    expect(tokenExchangeFieldError(invalid('tokenExchange.scope', 'too long'))?.field).toBe('scope');
    expect(tokenExchangeFieldError(invalid('tokenExchange', 'required with authType token_exchange'))).toEqual({
      field: 'tokenExchange',
      message: 'required with authType token_exchange',
    });
  });

  it('ignores other fields, other statuses and non-API failures', () => {
    expect(tokenExchangeFieldError(invalid('name', 'Required'))).toBeNull();
    expect(tokenExchangeFieldError(invalid('tokenExchange.unknown', 'x'))).toBeNull();
    expect(
      tokenExchangeFieldError(new ApiError(502, 'UPSTREAM_ERROR', 'x', { field: 'tokenExchange.tokenUrl' })),
    ).toBeNull();
    expect(tokenExchangeFieldError(new TypeError('offline'))).toBeNull();
    expect(tokenExchangeFieldError(null)).toBeNull();
  });
});

describe('describeTokenExchange', () => {
  const settings = {
    tokenUrl: 'https://as.example/token',
    issuer: null,
    clientId: 'gw',
    audience: 'api',
    resource: null,
    scope: 'read',
  };

  it('says where and as which client, and whether a secret is set, never the secret', () => {
    expect(describeTokenExchange({ tokenExchange: settings, hasAuthSecret: true })).toBe(
      'token_exchange at token endpoint https://as.example/token as client gw; client secret set; audience api, scope read',
    );
    expect(
      describeTokenExchange({
        tokenExchange: { ...settings, tokenUrl: null, issuer: 'https://as.example', audience: null, scope: null },
        hasAuthSecret: false,
      }),
    ).toBe('token_exchange at issuer https://as.example as client gw; client secret not set (public client)');
    expect(describeTokenExchange({ tokenExchange: null, hasAuthSecret: false })).toBe('token_exchange: not configured');
  });
});

describe('editing: tokenExchangeDraftOf and tokenExchangeUpdateBody', () => {
  const stored = {
    tokenUrl: null,
    issuer: 'https://as.example',
    clientId: 'gw',
    audience: 'api',
    resource: null,
    scope: 'read write',
  };

  it('prefills every setting of the provider but the secret, which is never read back', () => {
    expect(tokenExchangeDraftOf({ tokenExchange: stored })).toEqual({
      serverKind: 'issuer',
      serverUrl: 'https://as.example',
      clientId: 'gw',
      clientSecret: '',
      audience: 'api',
      resource: '',
      scope: 'read write',
    });
    expect(
      tokenExchangeDraftOf({ tokenExchange: { ...stored, tokenUrl: 'https://as.example/token', issuer: null } }),
    ).toMatchObject({
      serverKind: 'token_url',
      serverUrl: 'https://as.example/token',
    });
    expect(tokenExchangeDraftOf({ tokenExchange: null })).toEqual(EMPTY_TOKEN_EXCHANGE);
  });

  it('an unchanged draft sends the same settings and no secret, so the stored secret is kept', () => {
    const body = tokenExchangeUpdateBody(tokenExchangeDraftOf({ tokenExchange: stored }), { removeSecret: false });
    expect(body).toEqual({
      tokenExchange: { issuer: 'https://as.example', clientId: 'gw', audience: 'api', scope: 'read write' },
    });
    expect(JSON.stringify(body)).not.toContain('clientSecret');
    expect(body).not.toHaveProperty('authSecret');
  });

  it('a typed secret replaces the stored one; removing it (public client) sends authSecret null, unless a new one was typed', () => {
    const draft = { ...tokenExchangeDraftOf({ tokenExchange: stored }), audience: '', scope: 'read' };
    expect(tokenExchangeUpdateBody({ ...draft, clientSecret: 'rotated' }, { removeSecret: false })).toEqual({
      tokenExchange: { issuer: 'https://as.example', clientId: 'gw', clientSecret: 'rotated', scope: 'read' },
    });
    expect(tokenExchangeUpdateBody(draft, { removeSecret: true })).toEqual({
      tokenExchange: { issuer: 'https://as.example', clientId: 'gw', scope: 'read' },
      authSecret: null,
    });
    expect(tokenExchangeUpdateBody({ ...draft, clientSecret: 'rotated' }, { removeSecret: true })).not.toHaveProperty(
      'authSecret',
    );
  });
});
