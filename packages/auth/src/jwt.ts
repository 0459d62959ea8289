import { createPublicKey, type KeyObject } from 'node:crypto';
import {
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
  type CryptoKey,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import {
  createEgressDispatcher,
  DependencyUnavailableError,
  egressFetch,
  egressPolicyFromConfig,
  EgressRefusedError,
  UnauthorizedError,
  type Clock,
  type Config,
} from '@agentgw/core';

/**
 * Every token the gateway signs says what it is for in the `tt` claim, so one kind can never be
 * replayed as another (a session token is not a login, a user token is not a service token).
 */
export type TokenType = 'login' | 'session' | 'confirmation' | 'service';
const TOKEN_TYPE_CLAIM = 'tt';

/** Asymmetric algorithms accepted from JWT_PUBLIC_KEY and external key sets. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384'] as const;

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31557600 };

/** '3600' → 3600, '15m' → 900, '24h' → 86400 (seconds, at least 1). */
export function parseDuration(text: string): number {
  const match = /^(\d+)\s*(ms|s|m|h|d|w|y)?$/i.exec(text.trim());
  if (!match) throw new Error(`invalid duration: ${text}`);
  const seconds = Number(match[1]) * UNIT_SECONDS[(match[2] ?? 's').toLowerCase()]!;
  return Math.max(1, Math.ceil(seconds));
}

export type SignedClaims = { sub: string } & Record<string, unknown>;
export type VerifiedClaims = JWTPayload & { sub: string };

/** Claim of our login tokens: the user's password-change stamp (ms, 0 = never) when signed. */
export const PASSWORD_STAMP_CLAIM = 'pwv';

/** Who a user token (login, JWT_PUBLIC_KEY or external issuer) says the caller is. */
export interface UserTokenIdentity {
  source: 'gateway' | 'public_key' | 'external';
  issuer: string;
  sub: string;
  email: string | null;
  /** The issuer vouches for the email (`email_verified: true`); only then may it link to a local user. */
  emailVerified: boolean;
  /** Our own login tokens: the password stamp they were signed under (0 when absent). */
  passwordStamp: number;
}

export interface JwtCodec {
  /** HS256 with JWT_SECRET, `iss` = JWT_ISSUER, `aud` = `audience` (default JWT_AUDIENCE). */
  sign(type: TokenType, claims: SignedClaims, lifetimeSeconds: number, audience?: string): Promise<string>;
  /** Verifies a token this gateway signed for `type`; throws UnauthorizedError otherwise. */
  verify(token: string, type: TokenType, audience?: string): Promise<VerifiedClaims>;
  /** Verifies a token presented as a user login, whichever trusted issuer signed it. */
  verifyUserToken(token: string): Promise<UserTokenIdentity>;
}

interface Verifier {
  source: UserTokenIdentity['source'];
  key: KeyObject | JWTVerifyGetKey;
  algorithms: string[];
  audience: string | string[] | undefined;
}

/** Algorithms pinned to the public key's type, so a key can only verify what it is meant for. */
function algorithmsFor(key: KeyObject): string[] {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') return ['RS256', 'RS384', 'RS512', 'PS256'];
  if (type === 'rsa-pss') return ['PS256'];
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return ['ES256'];
    if (curve === 'secp384r1') return ['ES384'];
  }
  throw new Error(`JWT_PUBLIC_KEY: unsupported key type ${type ?? 'unknown'}`);
}

/**
 * An HS256 secret as a CryptoKey for jose, imported on first use and then reused: handing jose
 * the raw bytes would import them again on every verify.
 */
function hs256Key(secret: string): () => Promise<CryptoKey> {
  let key: Promise<CryptoKey> | undefined;
  return () =>
    (key ??= crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    ));
}

const invalid = () => new UnauthorizedError('Invalid token', 'INVALID_TOKEN');

function toAuthError(err: unknown): Error {
  if (err instanceof UnauthorizedError) return err;
  if (err instanceof joseErrors.JWTExpired) return new UnauthorizedError('Token expired', 'TOKEN_EXPIRED');
  if (err instanceof joseErrors.JWKSTimeout) return new DependencyUnavailableError('Token issuer key set unavailable');
  // The key set URL points where the egress policy forbids: an operator error, not the caller's.
  if (err instanceof EgressRefusedError)
    return new DependencyUnavailableError('Token issuer key set unavailable (refused by the egress policy)');
  if (err instanceof joseErrors.JOSEError) return invalid();
  // Anything else comes from fetching a remote key set (network failure).
  return new DependencyUnavailableError('Token issuer key set unavailable');
}

export function createJwtCodec({ config, clock }: { config: Config; clock: Clock }): JwtCodec {
  const ownKey = hs256Key(config.JWT_SECRET);
  const own: Verifier = { source: 'gateway', key: ownKey, algorithms: ['HS256'], audience: config.JWT_AUDIENCE };

  let publicKey: Verifier | null = null;
  if (config.JWT_PUBLIC_KEY) {
    const key = createPublicKey(config.JWT_PUBLIC_KEY);
    publicKey = { source: 'public_key', key, algorithms: algorithmsFor(key), audience: config.JWT_AUDIENCE };
  }

  // Key sets are fetched through the egress policy (after DNS resolution, no redirects followed).
  const jwksFetch = config.JWT_EXTERNAL_ISSUERS.some((i) => i.jwksUri)
    ? egressFetch(createEgressDispatcher(egressPolicyFromConfig(config)))
    : undefined;
  const external = new Map<string, Verifier>();
  for (const item of config.JWT_EXTERNAL_ISSUERS) {
    external.set(item.issuer, {
      source: 'external',
      key: item.jwksUri
        ? createRemoteJWKSet(new URL(item.jwksUri), { [customFetch]: jwksFetch })
        : hs256Key(item.secret!),
      algorithms: item.jwksUri ? [...ASYMMETRIC_ALGORITHMS] : ['HS256'],
      audience: item.audience,
    });
  }

  async function check(token: string, verifier: Verifier, issuer: string): Promise<VerifiedClaims> {
    try {
      const options = {
        algorithms: verifier.algorithms,
        issuer,
        audience: verifier.audience,
        currentDate: clock.now(),
        requiredClaims: ['exp', 'sub'],
      };
      const { payload } =
        typeof verifier.key === 'function'
          ? await jwtVerify(token, verifier.key, options)
          : await jwtVerify(token, verifier.key, options);
      return payload as VerifiedClaims;
    } catch (err) {
      throw toAuthError(err);
    }
  }

  /** Picks the verifier from the unverified `iss` and `alg`; the verifier then checks both. */
  function selectVerifier(token: string): { verifier: Verifier; issuer: string } {
    let issuer: unknown;
    let alg: unknown;
    try {
      issuer = decodeJwt(token).iss;
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw invalid();
    }
    if (typeof issuer !== 'string') throw invalid();
    if (issuer === config.JWT_ISSUER) {
      if (alg === 'HS256') return { verifier: own, issuer };
      if (publicKey) return { verifier: publicKey, issuer };
      throw invalid();
    }
    const verifier = external.get(issuer);
    if (!verifier) throw invalid();
    return { verifier, issuer };
  }

  return {
    async sign(type, claims, lifetimeSeconds, audience = config.JWT_AUDIENCE) {
      const now = Math.floor(clock.now().getTime() / 1000);
      const jwt = new SignJWT({ ...claims, [TOKEN_TYPE_CLAIM]: type })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(config.JWT_ISSUER)
        .setIssuedAt(now)
        .setExpirationTime(now + lifetimeSeconds);
      if (audience) jwt.setAudience(audience);
      return jwt.sign(await ownKey());
    },

    async verify(token, type, audience = config.JWT_AUDIENCE) {
      const claims = await check(token, { ...own, audience }, config.JWT_ISSUER);
      if (claims[TOKEN_TYPE_CLAIM] !== type) throw invalid();
      return claims;
    },

    async verifyUserToken(token) {
      const { verifier, issuer } = selectVerifier(token);
      const claims = await check(token, verifier, issuer);
      const type = claims[TOKEN_TYPE_CLAIM];
      // Our own HS256 logins must say so; tokens from other signers may omit `tt` but not claim another type.
      if (verifier.source === 'gateway' ? type !== 'login' : type !== undefined && type !== 'login') throw invalid();
      return {
        source: verifier.source,
        issuer,
        sub: claims.sub,
        email: typeof claims.email === 'string' ? claims.email.toLowerCase() : null,
        emailVerified: claims.email_verified === true,
        passwordStamp:
          verifier.source === 'gateway' && typeof claims[PASSWORD_STAMP_CLAIM] === 'number'
            ? claims[PASSWORD_STAMP_CLAIM]
            : 0,
      };
    },
  };
}
