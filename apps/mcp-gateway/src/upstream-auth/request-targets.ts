import type { Principal } from '@agentgw/auth';
import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import type { TokenExchange } from '@agentgw/credentials';
import type { UpstreamTarget } from '@agentgw/mcp-client';
import { upstreamTarget } from '../upstream-targets.js';
import { callerAuthOf, refusalError } from './caller-auth.js';
import type { UserCredentials } from './user-credentials.js';

/** Who a request to an upstream is made for, and what their auth is read from. */
export interface TargetRequest {
  principal: Principal;
  requestId: string;
  /** The revision the client speaks (see CallIdentity); absent: the upstream's newest. */
  clientVersion?: string;
  /** The caller's own request headers: a `token_exchange` provider exchanges their bearer. */
  headers: Pick<Headers, 'get'>;
  /** The client's capabilities: a missing connection is asked for by URL-mode elicitation when it declared it. */
  capabilities: Readonly<Record<string, unknown>>;
}

/** Where a caller's auth for a per-user provider comes from: the same sources as a call's. */
export interface RequestTargetDeps {
  catalog: Pick<Catalog, 'providers'>;
  userCredentials: UserCredentials;
  exchange: () => TokenExchange;
}

/** The headers that carry a user's own auth upstream (`Authorization: Bearer`, or `X-Api-Key` for `user_key`). */
const USER_AUTH_HEADERS = ['authorization', 'x-api-key'] as const;

/** Whether `headers` carry a user's own auth: a per-user provider's request never goes without it. */
export const carriesUserAuth = (headers: Record<string, string> | null): boolean =>
  headers !== null && USER_AUTH_HEADERS.some((name) => typeof headers[name] === 'string');

/**
 * The one place a request's upstream target is built (README: "Forwarded as the user"): the
 * provider's endpoint and its own auth with the caller's identity, and for a provider that
 * answers each user with their own credential that user's auth, read as a tools/call reads it
 * (`callerAuthOf`). A caller without it is refused with the
 * call's own error (CREDENTIALS_REQUIRED and the connect URL, USER_REQUIRED, SIGN_IN_TOKEN_REQUIRED);
 * it is never sent with shared or no auth. A shared-auth provider costs no lookup.
 */
export class RequestTargets {
  constructor(private readonly deps: RequestTargetDeps) {}

  /** The target without the caller's own auth: what a shared-auth provider's requests go to, and a call's base (its auth is added with the call's headers). */
  identified(provider: ProviderRecord, request: Omit<TargetRequest, 'headers' | 'capabilities'>): UpstreamTarget {
    const { principal, requestId, clientVersion } = request;
    return upstreamTarget(
      provider,
      this.deps.catalog.providers.authSecret(provider),
      clientVersion === undefined ? { principal, requestId } : { principal, requestId, clientVersion },
    );
  }

  /** The target of one request for the caller: with their own auth for a per-user provider (on upstream sessions of that principal alone), or the refusal a call of theirs would get (without an audit id: only calls are audited). */
  async forRequest(provider: ProviderRecord, request: TargetRequest): Promise<UpstreamTarget> {
    const target = this.identified(provider, request);
    const auth = await callerAuthOf(
      {
        userCredentials: this.deps.userCredentials,
        exchange: this.deps.exchange,
        clientSecret: (p) => this.deps.catalog.providers.authSecret(p),
      },
      provider,
      request.principal,
      request.headers,
    );
    if (auth.kind === 'none') return target;
    if (auth.kind === 'refused') throw refusalError(auth.refusal, provider, request.capabilities, null).error;
    return { ...target, headers: { ...target.headers, ...auth.headers } };
  }
}
