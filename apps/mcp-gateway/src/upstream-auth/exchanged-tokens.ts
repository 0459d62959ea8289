import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { AppError } from '@agentgw/core';
import {
  createTokenExchange,
  type ExchangeCaller,
  type TokenExchange,
  type TokenExchangeConfig,
} from '@agentgw/credentials';
import type { ServiceDeps } from '@agentgw/service-kit';
import { GATEWAY_RPC, RpcError } from '../rpc-errors.js';

/** The caller a token is exchanged for, or why the call has none. */
export type CallerOrRefusal = { kind: 'caller'; caller: ExchangeCaller } | { kind: 'refused'; reason: string };

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Whom RFC 8693 exchanges a token for: a user who presented a sign-in token of theirs as the
 * bearer: a user JWT (the gateway's login or an external IdP's; `via: 'jwt'`) or a gateway OAuth
 * access token (`via: 'oauth'`). An agent runtime token, an API key, a session token or the
 * console cookie is no sign-in of the user's. The bearer itself is not what the STS receives
 * (ExchangeSubjects mints a subject token for it).
 */
export function exchangeCallerOf(principal: Principal, headers: Pick<Headers, 'get'>): CallerOrRefusal {
  const bearer = BEARER.exec(headers.get('authorization') ?? '')?.[1];
  if (principal.via === 'jwt' && bearer)
    return {
      kind: 'caller',
      caller: { userId: principal.endUserId, tenantId: principal.tenantId, bearer, clientId: null },
    };
  if (principal.via === 'oauth' && bearer)
    return {
      kind: 'caller',
      caller: { userId: principal.endUserId, tenantId: principal.tenantId, bearer, clientId: principal.oauth.clientId },
    };
  const presented =
    principal.via === 'jwt'
      ? 'a console cookie'
      : principal.via === 'oauth'
        ? 'no bearer token'
        : `a ${principal.via.replace('_', ' ')}`;
  return {
    kind: 'refused',
    reason: `This tool's provider exchanges the caller's sign-in token (RFC 8693): call with a user's JWT or OAuth access token, not ${presented}`,
  };
}

/** What exchanging for `provider` needs beside the caller's token: its settings and its opened client secret. */
function exchangeConfigOf(provider: ProviderRecord, clientSecret: string | null): TokenExchangeConfig | null {
  const settings = provider.tokenExchange;
  if (provider.authType !== 'token_exchange' || settings === null) return null;
  return {
    server: settings.server,
    client: { clientId: settings.clientId, clientSecret },
    audience: settings.audience,
    resource: settings.resource,
    scope: settings.scope,
  };
}

/** What a request to a `token_exchange` provider carries for its caller: the exchanged token, or why there is none (with its error code). */
export type ExchangedAuth =
  | { kind: 'headers'; headers: Record<string, string> }
  | { kind: 'refused'; reason: string; code: 'SIGN_IN_TOKEN_REQUIRED' | 'TOKEN_EXCHANGE_REFUSED' };

/**
 * The exchanged token for `principal`'s requests to a `token_exchange` provider (null for other
 * providers) as `Authorization: Bearer`; the caller's own token never goes upstream. One rule for
 * calls, lists and every other forwarded request (caller-auth.ts).
 */
export async function exchangedAuthOf(
  deps: { exchange: () => TokenExchange; clientSecret(provider: ProviderRecord): string | null },
  principal: Principal,
  provider: ProviderRecord,
  headers: Pick<Headers, 'get'>,
): Promise<ExchangedAuth | null> {
  const cfg = exchangeConfigOf(provider, deps.clientSecret(provider));
  if (cfg === null) return null;
  const caller = exchangeCallerOf(principal, headers);
  if (caller.kind === 'refused') return { kind: 'refused', reason: caller.reason, code: 'SIGN_IN_TOKEN_REQUIRED' };
  try {
    return {
      kind: 'headers',
      headers: { authorization: `Bearer ${await deps.exchange().accessTokenFor(provider.id, caller.caller, cfg)}` },
    };
  } catch (err) {
    if (err instanceof AppError && err.code === 'TOKEN_EXCHANGE_REFUSED')
      return { kind: 'refused', reason: err.message, code: 'TOKEN_EXCHANGE_REFUSED' };
    throw err;
  }
}

/** The error of a request to a `token_exchange` provider that has no exchanged token: for a call (with its audit id) and any other request forwarded as the caller. */
export function exchangeRefusal(
  provider: ProviderRecord,
  reason: string,
  code: string,
  auditId: string | null,
): RpcError {
  return new RpcError(GATEWAY_RPC.DENIED, reason, 403, {
    decision: 'denied',
    reason,
    code,
    providerId: provider.id,
    ...(auditId === null ? {} : { auditId }),
  });
}

/** The process's token exchanger, built at first use (a gateway without such providers never builds it). */
export function tokenExchangeFor(deps: Pick<ServiceDeps, 'config' | 'clock' | 'db'>): () => TokenExchange {
  let exchange: TokenExchange | null = null;
  return () => (exchange ??= createTokenExchange(deps));
}
