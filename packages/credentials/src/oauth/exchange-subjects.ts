import { loadOAuthSigningKeys, OAUTH_SIGNING_ALG, oauthIssuerOf, secretBoxFor } from '@agentgw/auth';
import { AppError, type Clock, type Config } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import { randomUUID } from 'node:crypto';
import { decodeJwt, importJWK, SignJWT, type CryptoKey } from 'jose';
import type { Kysely } from 'kysely';

/** RFC 8693 §3 token type identifiers the gateway can present as the subject token. */
export type SubjectTokenType =
  | 'urn:ietf:params:oauth:token-type:jwt'
  | 'urn:ietf:params:oauth:token-type:id_token'
  | 'urn:ietf:params:oauth:token-type:access_token';

/** The subject token shown to the STS for the caller (see ExchangeSubjects: minted for it, never a gateway sign-in token). */
export interface SubjectToken {
  token: string;
  type: SubjectTokenType;
}

/** The caller a token is exchanged for: their user, the bearer they signed in with and the MCP client between (if any). */
export interface ExchangeCaller {
  userId: string;
  /** The caller's tenant (recorded with a refused exchange); null for a platform-wide user. */
  tenantId: string | null;
  /** The caller's own sign-in token: a reuse key, and sent on only to the external identity provider that issued it. */
  bearer: string;
  /** The MCP client the caller signed in through (a gateway OAuth access token); null for a JWT. */
  clientId: string | null;
}

/** The security token service (RFC 8693) as the exchange knows it: its issuer when discovery verified one, and the audience a subject token names. */
export interface ExchangeServer {
  issuer: string | null;
  audience: string;
}

/** What a token exchange shows the STS for a caller: never a token that signs in to the gateway. */
export interface ExchangeSubjects {
  subjectFor(caller: ExchangeCaller, sts: ExchangeServer): Promise<SubjectToken>;
}

/** A minted subject token lives this long: the exchange uses it at once (RFC 8693 asks for short-lived subject tokens). */
export const MINTED_SUBJECT_LIFETIME_S = 120;
/** The signing key is re-read this often, so a rotation reaches a running process. */
const KEY_RELOAD_MS = 5 * 60_000;

const refused = (message: string) => new AppError(503, 'TOKEN_EXCHANGE_UNAVAILABLE', message);

/**
 * The subject tokens of the gateway's token exchanges. The gateway's login JWT and its MCP access
 * tokens sign in to the gateway, so they never leave it: the STS gets a JWT minted for it alone
 * (ES256 with the authorization server's key, published at `/oauth/jwks`; `iss` the gateway,
 * `sub` the user, `aud` the STS, two minutes, `act` the gateway and the MCP client acting for the
 * user). An external identity provider's own token is passed on only to that same issuer (the STS
 * is the provider that issued it, so it learns nothing new).
 */
export class GatewayExchangeSubjects implements ExchangeSubjects {
  private key: { kid: string; key: CryptoKey | Uint8Array; loadedAt: number } | null = null;
  private readonly externalIssuers: ReadonlySet<string>;

  constructor(private readonly deps: { db: Kysely<Database>; config: Config; clock: Clock }) {
    this.externalIssuers = new Set(
      deps.config.JWT_EXTERNAL_ISSUERS.map((i) => i.issuer).filter((i) => i !== deps.config.JWT_ISSUER),
    );
  }

  async subjectFor(caller: ExchangeCaller, sts: ExchangeServer): Promise<SubjectToken> {
    const external = this.externalIssuerOf(caller.bearer);
    if (external !== null && external === sts.issuer)
      return { token: caller.bearer, type: 'urn:ietf:params:oauth:token-type:jwt' };
    return { token: await this.mint(caller, sts.audience), type: 'urn:ietf:params:oauth:token-type:jwt' };
  }

  /** The issuer of an external identity provider's JWT (one of JWT_EXTERNAL_ISSUERS, which signed in the caller); null for any other token. */
  private externalIssuerOf(bearer: string): string | null {
    try {
      const { iss } = decodeJwt(bearer);
      return typeof iss === 'string' && this.externalIssuers.has(iss) ? iss : null;
    } catch {
      return null;
    }
  }

  private async mint(caller: ExchangeCaller, audience: string): Promise<string> {
    const issuer = oauthIssuerOf(this.deps.config);
    if (issuer === undefined)
      throw refused(
        'Token exchange signs a subject token with the gateway authorization server key: set GATEWAY_PUBLIC_URL so the STS can verify it at /oauth/jwks',
      );
    const { kid, key } = await this.signingKey();
    const now = Math.floor(this.deps.clock.now().getTime() / 1000);
    return new SignJWT({
      act: { sub: issuer, ...(caller.clientId === null ? {} : { client_id: caller.clientId }) },
    })
      .setProtectedHeader({ alg: OAUTH_SIGNING_ALG, typ: 'JWT', kid })
      .setIssuer(issuer)
      .setSubject(caller.userId)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + MINTED_SUBJECT_LIFETIME_S)
      .setJti(randomUUID())
      .sign(key);
  }

  /** The oldest signing key, the one the authorization server signs with (created here when none exists yet). */
  private async signingKey(): Promise<{ kid: string; key: CryptoKey | Uint8Array }> {
    const now = this.deps.clock.now().getTime();
    if (this.key && now - this.key.loadedAt < KEY_RELOAD_MS) return this.key;
    const [oldest] = await loadOAuthSigningKeys(this.deps.db, secretBoxFor(this.deps.config));
    if (oldest?.kid === undefined) throw refused('The gateway has no OAuth signing key');
    this.key = { kid: oldest.kid, key: await importJWK(oldest, OAUTH_SIGNING_ALG), loadedAt: now };
    return this.key;
  }
}
