import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@agentgw/core';
import { createJwtCodec, parseDuration } from './jwt.js';
import { serveJwks, testConfig } from './auth.fixtures.js';

const SECRET = 'test-secret-that-is-at-least-32-characters-long';
const ISSUER = 'agentgw-gateway';
const encode = (s: string) => new TextEncoder().encode(s);
const nowSeconds = (clock: ManualClock) => Math.floor(clock.now().getTime() / 1000);

/** A token signed outside the codec, so each test controls exactly one thing. */
function foreignToken(clock: ManualClock, claims: Record<string, unknown> = {}, iss = ISSUER) {
  return new SignJWT({ tt: 'login', ...claims })
    .setSubject('user-1')
    .setIssuer(iss)
    .setIssuedAt(nowSeconds(clock))
    .setExpirationTime(nowSeconds(clock) + 600);
}

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (err: { status?: number; code?: string }) => `${err.status} ${err.code}`,
  );

describe('parseDuration', () => {
  it.each([
    ['3600', 3600],
    ['15m', 900],
    ['24h', 86400],
    ['7d', 604800],
    ['30s', 30],
    ['1500ms', 2],
  ])('%s → %i seconds', (text, seconds) => expect(parseDuration(text)).toBe(seconds));

  it('rejects nonsense', () => expect(() => parseDuration('soon')).toThrow());
});

describe('gateway tokens (HS256)', () => {
  const clock = new ManualClock();
  const codec = createJwtCodec({ config: testConfig({ JWT_EXPIRES_IN: '15m' }), clock });

  it('signs login tokens with iss, exp and tt and verifies them', async () => {
    const token = await codec.sign('login', { sub: 'user-1', email: 'A@x.io' }, 900);
    const [header] = token.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(await codec.verifyUserToken(token)).toEqual({
      source: 'gateway',
      issuer: ISSUER,
      sub: 'user-1',
      email: 'a@x.io',
      emailVerified: false,
      passwordStamp: 0,
    });
    const stamped = await codec.sign('login', { sub: 'user-1', pwv: 1_700_000_000_123 }, 900);
    expect((await codec.verifyUserToken(stamped)).passwordStamp).toBe(1_700_000_000_123);
  });

  it('rejects an expired token', async () => {
    const token = await codec.sign('login', { sub: 'user-1' }, 60);
    clock.advance(61_000);
    expect(await rejection(codec.verifyUserToken(token))).toBe('401 TOKEN_EXPIRED');
  });

  it('rejects a forged signature', async () => {
    const forged = await foreignToken(clock)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(encode('x'.repeat(48)));
    expect(await rejection(codec.verifyUserToken(forged))).toBe('401 INVALID_TOKEN');
    const token = await codec.sign('login', { sub: 'user-1' }, 60);
    const [h, , s] = token.split('.');
    const tampered = [
      h,
      Buffer.from(JSON.stringify({ sub: 'admin', iss: ISSUER, tt: 'login', exp: 9e9 })).toString('base64url'),
      s,
    ].join('.');
    expect(await rejection(codec.verifyUserToken(tampered))).toBe('401 INVALID_TOKEN');
  });

  it('rejects a wrong issuer', async () => {
    const token = await foreignToken(clock, {}, 'someone-else')
      .setProtectedHeader({ alg: 'HS256' })
      .sign(encode(SECRET));
    expect(await rejection(codec.verifyUserToken(token))).toBe('401 INVALID_TOKEN');
    expect(await rejection(codec.verify(token, 'login'))).toBe('401 INVALID_TOKEN');
  });

  it('rejects alg none', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(
      JSON.stringify({ sub: 'user-1', iss: ISSUER, tt: 'login', exp: nowSeconds(clock) + 600 }),
    ).toString('base64url');
    expect(await rejection(codec.verifyUserToken(`${header}.${payload}.`))).toBe('401 INVALID_TOKEN');
    expect(await rejection(codec.verify(`${header}.${payload}.`, 'login'))).toBe('401 INVALID_TOKEN');
  });

  it('rejects garbage', async () => {
    expect(await rejection(codec.verifyUserToken('not-a-jwt'))).toBe('401 INVALID_TOKEN');
    expect(await rejection(codec.verifyUserToken('a.b.c'))).toBe('401 INVALID_TOKEN');
  });

  it('keeps token types apart', async () => {
    const session = await codec.sign('session', { sub: 'end-user' }, 900);
    const login = await codec.sign('login', { sub: 'user-1' }, 900);
    const untyped = await foreignToken(clock, { tt: undefined })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(encode(SECRET));
    expect(await rejection(codec.verifyUserToken(session))).toBe('401 INVALID_TOKEN');
    expect(await rejection(codec.verifyUserToken(untyped))).toBe('401 INVALID_TOKEN');
    expect(await rejection(codec.verify(login, 'session'))).toBe('401 INVALID_TOKEN');
    expect((await codec.verify(session, 'session')).sub).toBe('end-user');
  });

  it('scopes service tokens to their audience', async () => {
    const token = await codec.sign('service', { sub: 'invoke-proxy' }, 60, 'vault');
    expect((await codec.verify(token, 'service', 'vault')).sub).toBe('invoke-proxy');
    expect(await rejection(codec.verify(token, 'service', 'audit-writer'))).toBe('401 INVALID_TOKEN');
    expect(await rejection(codec.verifyUserToken(token))).toBe('401 INVALID_TOKEN');
  });
});

describe('audience', () => {
  const clock = new ManualClock();
  const codec = createJwtCodec({ config: testConfig({ JWT_AUDIENCE: 'gateway-api' }), clock });

  it('sets aud and rejects tokens for another audience or none', async () => {
    const token = await codec.sign('login', { sub: 'user-1' }, 60);
    expect((await codec.verifyUserToken(token)).sub).toBe('user-1');
    const other = await foreignToken(clock)
      .setAudience('other-api')
      .setProtectedHeader({ alg: 'HS256' })
      .sign(encode(SECRET));
    const none = await foreignToken(clock).setProtectedHeader({ alg: 'HS256' }).sign(encode(SECRET));
    expect(await rejection(codec.verifyUserToken(other))).toBe('401 INVALID_TOKEN');
    expect(await rejection(codec.verifyUserToken(none))).toBe('401 INVALID_TOKEN');
  });
});

describe('JWT_PUBLIC_KEY', () => {
  const clock = new ManualClock();
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const codec = createJwtCodec({ config: testConfig({ JWT_PUBLIC_KEY: pem }), clock });

  it('accepts RS256 and PS256 tokens signed with the private key', async () => {
    for (const alg of ['RS256', 'PS256']) {
      const token = await foreignToken(clock, { tt: undefined, email: 'rs@x.io' })
        .setProtectedHeader({ alg })
        .sign(rsa.privateKey);
      expect(await codec.verifyUserToken(token)).toMatchObject({
        source: 'public_key',
        sub: 'user-1',
        email: 'rs@x.io',
      });
    }
  });

  it('still signs and accepts its own HS256 login tokens', async () => {
    const token = await codec.sign('login', { sub: 'user-1' }, 60);
    expect((await codec.verifyUserToken(token)).source).toBe('gateway');
  });

  it('rejects an HS256 token keyed with the PEM text (algorithm confusion)', async () => {
    const token = await foreignToken(clock).setProtectedHeader({ alg: 'HS256' }).sign(encode(pem));
    expect(await rejection(codec.verifyUserToken(token))).toBe('401 INVALID_TOKEN');
  });

  it('rejects an RS token claiming another type, and an EC token for an RSA key', async () => {
    const session = await foreignToken(clock, { tt: 'session' })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(rsa.privateKey);
    expect(await rejection(codec.verifyUserToken(session))).toBe('401 INVALID_TOKEN');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const esToken = await foreignToken(clock).setProtectedHeader({ alg: 'ES256' }).sign(ec.privateKey);
    expect(await rejection(codec.verifyUserToken(esToken))).toBe('401 INVALID_TOKEN');
  });

  it('pins EC keys to their curve', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ecCodec = createJwtCodec({
      config: testConfig({ JWT_PUBLIC_KEY: ec.publicKey.export({ type: 'spki', format: 'pem' }).toString() }),
      clock,
    });
    const token = await foreignToken(clock).setProtectedHeader({ alg: 'ES256' }).sign(ec.privateKey);
    expect((await ecCodec.verifyUserToken(token)).source).toBe('public_key');
    const rsToken = await foreignToken(clock).setProtectedHeader({ alg: 'RS256' }).sign(rsa.privateKey);
    expect(await rejection(ecCodec.verifyUserToken(rsToken))).toBe('401 INVALID_TOKEN');
  });

  it('rejects asymmetric tokens when no public key is configured', async () => {
    const plain = createJwtCodec({ config: testConfig(), clock });
    const token = await foreignToken(clock).setProtectedHeader({ alg: 'RS256' }).sign(rsa.privateKey);
    expect(await rejection(plain.verifyUserToken(token))).toBe('401 INVALID_TOKEN');
  });
});

describe('external issuers', () => {
  const clock = new ManualClock(Date.now());
  const externalSecret = 'external-shared-secret-of-32-characters!';
  let jwks: Awaited<ReturnType<typeof serveJwks>>;
  let signingKey: CryptoKey;
  let codec: ReturnType<typeof createJwtCodec>;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    signingKey = pair.privateKey;
    jwks = await serveJwks({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] });
    const issuers = [
      { issuer: 'https://idp.example', audience: 'gateway', jwksUri: jwks.url },
      { issuer: 'https://partner.example', audience: 'gateway', secret: externalSecret },
    ];
    codec = createJwtCodec({ config: testConfig({ JWT_EXTERNAL_ISSUERS: JSON.stringify(issuers) }), clock });
  });
  afterAll(() => jwks.close());

  const idpToken = (audience = 'gateway') =>
    foreignToken(clock, { tt: undefined, email: 'Ext@Idp.example' }, 'https://idp.example')
      .setAudience(audience)
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(signingKey);

  it('verifies a JWKS issuer by its key set', async () => {
    expect(await codec.verifyUserToken(await idpToken())).toEqual({
      source: 'external',
      issuer: 'https://idp.example',
      sub: 'user-1',
      email: 'ext@idp.example',
      emailVerified: false,
      passwordStamp: 0,
    });
  });

  it('reports email_verified only when the issuer says exactly true', async () => {
    const sign = (claims: Record<string, unknown>) =>
      foreignToken(clock, { tt: undefined, email: 'x@partner.example', ...claims }, 'https://partner.example')
        .setAudience('gateway')
        .setProtectedHeader({ alg: 'HS256' })
        .sign(encode(externalSecret));
    expect((await codec.verifyUserToken(await sign({ email_verified: true }))).emailVerified).toBe(true);
    expect((await codec.verifyUserToken(await sign({ email_verified: 'true' }))).emailVerified).toBe(false);
    expect((await codec.verifyUserToken(await sign({}))).emailVerified).toBe(false);
  });

  it("checks the external issuer's audience", async () => {
    expect(await rejection(codec.verifyUserToken(await idpToken('elsewhere')))).toBe('401 INVALID_TOKEN');
  });

  it('refuses an HS256 token for a JWKS issuer', async () => {
    const token = await foreignToken(clock, {}, 'https://idp.example')
      .setAudience('gateway')
      .setProtectedHeader({ alg: 'HS256' })
      .sign(encode(externalSecret));
    expect(await rejection(codec.verifyUserToken(token))).toBe('401 INVALID_TOKEN');
  });

  it('verifies a shared-secret issuer with HS256 only', async () => {
    const token = await foreignToken(clock, { tt: undefined }, 'https://partner.example')
      .setAudience('gateway')
      .setProtectedHeader({ alg: 'HS256' })
      .sign(encode(externalSecret));
    expect(await codec.verifyUserToken(token)).toMatchObject({
      source: 'external',
      issuer: 'https://partner.example',
      sub: 'user-1',
    });
    const forged = await foreignToken(clock, {}, 'https://partner.example')
      .setAudience('gateway')
      .setProtectedHeader({ alg: 'HS256' })
      .sign(encode(SECRET));
    expect(await rejection(codec.verifyUserToken(forged))).toBe('401 INVALID_TOKEN');
  });

  it('answers 503 when a key set cannot be fetched', async () => {
    const down = createJwtCodec({
      config: testConfig({
        JWT_EXTERNAL_ISSUERS: JSON.stringify([
          { issuer: 'https://idp.example', audience: 'gateway', jwksUri: 'http://127.0.0.1:1/jwks' },
        ]),
      }),
      clock,
    });
    expect(await rejection(down.verifyUserToken(await idpToken()))).toBe('503 SERVICE_UNAVAILABLE');
  });

  it('fetches key sets through the egress policy: a refused address is a 503 and is never contacted', async () => {
    const codecFor = (env: Record<string, string>, jwksUri: string) =>
      createJwtCodec({
        config: testConfig({
          ...env,
          JWT_EXTERNAL_ISSUERS: JSON.stringify([{ issuer: 'https://idp.example', audience: 'gateway', jwksUri }]),
        }),
        clock,
      });
    const before = jwks.hits();
    // The same local key set that works above is refused under public-only…
    const strict = codecFor({ EGRESS_POLICY: 'public-only' }, jwks.url);
    expect(await rejection(strict.verifyUserToken(await idpToken()))).toBe('503 SERVICE_UNAVAILABLE');
    expect(jwks.hits()).toBe(before);
    // …and metadata addresses are refused under every policy.
    const metadata = codecFor({ EGRESS_POLICY: 'allow-private' }, 'http://169.254.169.254/latest/jwks');
    expect(await rejection(metadata.verifyUserToken(await idpToken()))).toBe('503 SERVICE_UNAVAILABLE');
  });
});
