import {
  AppError,
  createEgressDispatcher,
  egressFetch,
  egressPolicyFromConfig,
  MemoryCache,
  type Clock,
  type Config,
} from '@agentgw/core';
import { recordIdentityEvent } from '@agentgw/audit';
import type { Database } from '@agentgw/db';
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import * as oauth from 'oauth4webapi';
import { assertSecureUrl, AuthorizationServers, requestOptions } from './authorization-server.js';
import { boundedFetch } from './bounded-fetch.js';
import { GatewayExchangeSubjects, type ExchangeCaller, type ExchangeSubjects } from './exchange-subjects.js';
import { oauthErrors } from './oauth-errors.js';

/** RFC 8693 §2.1: the grant type of a token exchange request. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** Where and for what a provider exchanges tokens: the token endpoint (explicit or discovered), the gateway's client there, and the target. */
export interface TokenExchangeConfig {
  server: { kind: 'token_url'; tokenUrl: string } | { kind: 'issuer'; issuer: string };
  client: { clientId: string; clientSecret: string } | { clientId: string; clientSecret: null };
  /** RFC 8693 `audience` (a logical name of the target service). */
  audience: string | null;
  /** RFC 8693 / RFC 8707 `resource` (the target service's URI). */
  resource: string | null;
  scope: string | null;
}

/** An exchanged token is reused until this long before its expiry. */
const EXPIRY_SKEW_MS = 30_000;
/** A token issued without `expires_in` is reused this long at most. */
const UNDATED_REUSE_MS = 60_000;
/** No exchanged token is reused longer than this, whatever its lifetime. */
const MAX_REUSE_MS = 60 * 60_000;
/** Exchanged tokens held at once (least recently used go first). */
const MAX_CACHED = 1_000;

/** A refused or failed exchange, as an operator reads it: whose, at which provider, and why (an error code and its message, never a token). */
export interface ExchangeRefusal {
  providerId: string;
  caller: ExchangeCaller;
  reason: string;
  message: string;
}

/** Where refused exchanges are recorded (the identity events, in a gateway process). */
export type ExchangeRefusals = (refusal: ExchangeRefusal) => Promise<void>;

interface Exchanged {
  accessToken: string;
  reuseUntil: number;
}

const refused = (error: string) =>
  new AppError(
    403,
    'TOKEN_EXCHANGE_REFUSED',
    `The authorization server refused to exchange the caller's token: ${error}`,
    { error },
  );
const fingerprint = (token: string) => createHash('sha256').update(token).digest('base64url');

/**
 * RFC 8693 token exchange for tool providers that call as the user without a stored token: a
 * subject token for the caller (ExchangeSubjects) goes to the provider's token endpoint
 * (oauth4webapi's generic grant request over the egress-checked fetch) and the issued access
 * token is sent upstream. Each result is cached per provider, user and caller's sign-in token
 * until shortly before it expires (bounded); a refusal by the server is a 403, a server that fails a 502.
 */
export class TokenExchange {
  private readonly cache: MemoryCache<Exchanged>;
  private readonly servers: AuthorizationServers;

  constructor(
    private readonly fetch: typeof globalThis.fetch,
    private readonly clock: Clock,
    private readonly subjects: ExchangeSubjects,
    private readonly refusals: ExchangeRefusals,
  ) {
    this.cache = new MemoryCache({ ttlMs: MAX_REUSE_MS, max: MAX_CACHED, clock });
    this.servers = new AuthorizationServers(fetch, clock);
  }

  /** The upstream access token for `caller` at provider `providerId`: cached, or exchanged now. */
  async accessTokenFor(providerId: string, caller: ExchangeCaller, cfg: TokenExchangeConfig): Promise<string> {
    const key = `${providerId}\u0000${caller.userId}\u0000${fingerprint(caller.bearer)}`;
    const cached = this.cache.get(key);
    if (cached && cached.reuseUntil > this.clock.now().getTime()) return cached.accessToken;
    const exchanged = await this.exchange(cfg, caller).catch(async (err: unknown) => {
      await this.refusals({
        providerId,
        caller,
        reason: err instanceof AppError ? err.code : 'TOKEN_EXCHANGE_FAILED',
        message: err instanceof Error ? err.message : 'unknown error',
      });
      throw err;
    });
    this.cache.set(key, exchanged);
    return exchanged.accessToken;
  }

  private async exchange(cfg: TokenExchangeConfig, caller: ExchangeCaller): Promise<Exchanged> {
    const as = await this.serverOf(cfg);
    // The STS is named by its issuer when discovery verified it (oauth4webapi checks the metadata's issuer), else by its token endpoint.
    const subject = await this.subjects.subjectFor(
      caller,
      cfg.server.kind === 'issuer'
        ? { issuer: as.issuer, audience: as.issuer }
        : { issuer: null, audience: String(as.token_endpoint) },
    );
    const client: oauth.Client = { client_id: cfg.client.clientId };
    const auth = cfg.client.clientSecret === null ? oauth.None() : oauth.ClientSecretBasic(cfg.client.clientSecret);
    const params = new URLSearchParams({
      subject_token: subject.token,
      subject_token_type: subject.type,
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    });
    if (cfg.audience) params.set('audience', cfg.audience);
    if (cfg.resource) params.set('resource', cfg.resource);
    if (cfg.scope) params.set('scope', cfg.scope);
    let response: oauth.TokenEndpointResponse;
    try {
      response = await oauth.processGenericTokenEndpointResponse(
        as,
        client,
        await oauth.genericTokenEndpointRequest(
          as,
          client,
          auth,
          TOKEN_EXCHANGE_GRANT,
          params,
          requestOptions(this.fetch),
        ),
      );
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError && err.status >= 400 && err.status < 500) throw refused(err.error);
      throw oauthErrors.tokenExchangeFailed(err instanceof Error ? err.message : 'unknown error');
    }
    const now = this.clock.now().getTime();
    const lifetimeMs =
      typeof response.expires_in === 'number' && response.expires_in > 0
        ? response.expires_in * 1000 - EXPIRY_SKEW_MS
        : UNDATED_REUSE_MS;
    return { accessToken: response.access_token, reuseUntil: now + Math.min(lifetimeMs, MAX_REUSE_MS) };
  }

  private async serverOf(cfg: TokenExchangeConfig): Promise<oauth.AuthorizationServer> {
    if (cfg.server.kind === 'issuer') {
      const as = await this.servers.resolve({ kind: 'issuer', issuer: cfg.server.issuer });
      if (!as.token_endpoint) throw oauthErrors.serverUnreachable('the issuer publishes no token endpoint');
      return as;
    }
    const tokenUrl = assertSecureUrl(cfg.server.tokenUrl, 'tokenUrl');
    return { issuer: tokenUrl.origin, token_endpoint: tokenUrl.href };
  }
}

/** The largest token endpoint answer read (a token response is a few KiB). */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Records a refused exchange as a `token_exchange.refused` identity event (the gateway acted: no actor). */
export function identityEventRefusals(db: Kysely<Database>): ExchangeRefusals {
  return ({ providerId, caller, reason, message }) =>
    recordIdentityEvent(db, {
      type: 'token_exchange.refused',
      actorId: null,
      userId: caller.userId,
      tenantId: caller.tenantId,
      clientId: caller.clientId,
      details: { by: 'gateway', providerId, reason, message },
    });
}

/** A TokenExchange over the configured egress policy's fetch, answers bounded, subject tokens minted by the gateway, refusals recorded: what a gateway process holds. */
export function createTokenExchange(deps: { config: Config; clock: Clock; db: Kysely<Database> }): TokenExchange {
  return new TokenExchange(
    boundedFetch(egressFetch(createEgressDispatcher(egressPolicyFromConfig(deps.config))), MAX_ANSWER_BYTES),
    deps.clock,
    new GatewayExchangeSubjects(deps),
    identityEventRefusals(deps.db),
  );
}
