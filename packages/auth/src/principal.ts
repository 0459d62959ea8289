import type { PrincipalVia } from '@agentgw/core';
import type { ApiKeyScope, RoleName } from '@agentgw/db';
import type { Permission } from './permissions.js';

/** The API key a request presented, as the principal carries it (its scopes limit the request). */
export interface PresentedApiKey {
  id: string;
  scopes: ApiKeyScope[];
}

/** What every credential form says about the caller: the form, its standing and where it acts. */
interface Standing<V extends PrincipalVia> {
  via: V;
  email: string | null;
  roles: RoleName[];
  tenantId: string | null;
  permissions: ReadonlySet<Permission>;
}

/** A user's JWT (or the console cookie): a person signed in, with no agent between. */
export interface UserJwtPrincipal extends Standing<'jwt'> {
  userId: string;
  /** The same user: they act for themselves. */
  endUserId: string;
  agentId: null;
  apiKey: null;
}

/** An API key acting for a user (X-User-Id or a user JWT), optionally as an agent (X-Agent-Id). */
export interface ApiKeyPrincipal extends Standing<'api_key'> {
  userId: string;
  /** The same user the key acts for. */
  endUserId: string;
  agentId: string | null;
  apiKey: PresentedApiKey;
}

/** An agent's runtime token alone: an agent, no user, no roles. */
export interface RuntimeTokenPrincipal extends Standing<'runtime_token'> {
  userId: null;
  email: null;
  endUserId: null;
  agentId: string;
  apiKey: null;
}

/** A session token: an agent acting for the end user the token names (an API key may come beside it). */
export interface SessionTokenPrincipal extends Standing<'session_token'> {
  /** The end user the agent acts for. */
  userId: string;
  endUserId: string;
  agentId: string;
  apiKey: PresentedApiKey | null;
}

/** What an OAuth access token says beside its user: the client, the endpoint it was issued for (RFC 8707), its scopes and grant. */
export interface OAuthGrantClaims {
  clientId: string;
  /** The MCP endpoint URL the token's audience names; checked against the endpoint called. */
  audience: string;
  scopes: string[];
  /** The grant (a user's connection of the client) the token belongs to: revoking it ends the token. */
  grantId: string;
}

/** An MCP client's OAuth access token: a user who signed in through that client, no key; an agent when an admin bound the client to one. */
export interface OAuthPrincipal extends Standing<'oauth'> {
  userId: string;
  /** The same user: they act for themselves through the client. */
  endUserId: string;
  /** The agent an admin bound this client (or all of the user's clients) to: its rules apply, the user as end user; null: the user's own rules. */
  agentId: string | null;
  apiKey: null;
  oauth: OAuthGrantClaims;
}

/**
 * Who is calling, however they proved it, one variant per credential form (`via`), so a state
 * no form produces (a runtime token with a user, a JWT with an agent) does not compile. Set by
 * the auth middlewares as `c.var.principal`.
 */
export type Principal =
  UserJwtPrincipal | ApiKeyPrincipal | RuntimeTokenPrincipal | SessionTokenPrincipal | OAuthPrincipal;

/** The forms that carry a user: every one but a bare runtime token. */
export type UserPrincipal = Exclude<Principal, RuntimeTokenPrincipal>;

/** Whether a user is acting (directly, through an API key, or as a session's end user): narrows to UserPrincipal. */
export const hasActingUser = (principal: Principal): principal is UserPrincipal => principal.via !== 'runtime_token';

/** The user a call acts for (the decider of its confirmations, the owner of what it creates); null for a bare runtime token. */
export const actingUserOf = (principal: Principal): string | null =>
  hasActingUser(principal) ? principal.userId : null;

/** Whether a person signed in themselves (user JWT or console cookie), not an agent or a key acting for them. */
export const isPersonSignedIn = (principal: Principal): principal is UserJwtPrincipal => principal.via === 'jwt';

declare module 'hono' {
  interface ContextVariableMap {
    principal: Principal;
  }
}
