import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { ForbiddenError, requestHeaders, UnauthorizedError } from '@agentgw/core';
import type { ApiKeyScope, RoleName } from '@agentgw/db';
import type { Permission } from './permissions.js';
import type { Principal } from './principal.js';
import type { AuthMode, AuthService } from './service.js';
import { assertSameOrigin, changesState, consoleSessionToken } from './console-session.js';

export interface FlexibleAuthOptions {
  /**
   * Session tokens reach the agent's upstream, whose URL its registrant controls, so they are
   * limited to what they exist for (MCP calls as the end user): only the MCP and tool-gate
   * endpoints pass `'accept'`. Default `'reject'`. Those endpoints are for runtimes, so they
   * also never take the console cookie.
   */
  sessionTokens?: 'accept' | 'reject';
}

/** Headers that carry credentials of their own: when one is present the console cookie is ignored. */
const EXPLICIT_CREDENTIALS = ['authorization', 'x-api-key', 'x-gateway-session-token'] as const;

/**
 * The console cookie, where it may stand in for `Authorization: Bearer <user JWT>`: the request
 * brings no credentials of its own, the endpoint is not a runtime one, and a state-changing
 * request proves it comes from the console's origin (CSRF). Null: authenticate the headers as sent.
 */
function consoleCookieHeaders(c: Context, runtimeEndpoint: boolean): Headers | null {
  const headers = requestHeaders(c);
  if (runtimeEndpoint || EXPLICIT_CREDENTIALS.some((name) => headers.has(name))) return null;
  const token = consoleSessionToken(c);
  if (token === null) return null;
  if (changesState(c)) assertSameOrigin(c);
  const withBearer = new Headers(c.req.raw.headers);
  withBearer.set('authorization', `Bearer ${token}`);
  return withBearer;
}

const authMiddleware = (auth: AuthService, mode: AuthMode, { sessionTokens = 'reject' }: FlexibleAuthOptions = {}) =>
  createMiddleware(async (c, next) => {
    const fromCookie = consoleCookieHeaders(c, sessionTokens === 'accept');
    // The cookie only ever holds a user login: authenticated as one ('jwt'), whatever the endpoint's mode.
    const principal = fromCookie
      ? await auth.authenticate(fromCookie, 'jwt')
      : await auth.authenticate(requestHeaders(c), mode);
    if (principal.via === 'session_token' && sessionTokens === 'reject') {
      throw new ForbiddenError(
        'Session tokens are only accepted by the MCP and tool-gate endpoints',
        'SESSION_TOKEN_NOT_ALLOWED',
      );
    }
    c.set('principal', principal);
    await next();
  });

/**
 * The user JWT that authenticated this request, as jwtAuth found it: the bearer token, else the
 * console cookie (e.g. to end an SSE stream when it expires). Only meaningful after jwtAuth.
 */
export function requestUserToken(c: Context): string | null {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '')?.[1];
  return bearer ?? consoleSessionToken(c);
}

/** A user JWT only (`Authorization: Bearer <jwt>`, or the console cookie). */
export const jwtAuth = (auth: AuthService) => authMiddleware(auth, 'jwt');

/** Any flexible-auth form: user JWT (or the console cookie), API key + user, runtime token; session tokens only when `options` accept them (and then never the cookie). */
export const flexibleAuth = (auth: AuthService, options?: FlexibleAuthOptions) =>
  authMiddleware(auth, 'flexible', options);

function principalOf(c: { get(key: 'principal'): Principal | undefined }): Principal {
  const principal = c.get('principal');
  // Mounting a guard without an auth middleware in front is a wiring bug; fail closed.
  if (!principal) throw new UnauthorizedError();
  return principal;
}

/** Lets the request through when the principal holds any of `permissions`. */
export const requirePermission = (...permissions: Permission[]) =>
  createMiddleware(async (c, next) => {
    const principal = principalOf(c);
    if (!permissions.some((p) => principal.permissions.has(p))) {
      throw new ForbiddenError(`Missing permission: ${permissions.join(' or ')}`, 'FORBIDDEN', {
        required: permissions,
      });
    }
    await next();
  });

/** Lets the request through when the principal holds any of `roles`. */
export const requireRole = (...roles: RoleName[]) =>
  createMiddleware(async (c, next) => {
    const principal = principalOf(c);
    if (!roles.some((r) => principal.roles.includes(r))) {
      throw new ForbiddenError(`Requires role: ${roles.join(' or ')}`, 'FORBIDDEN', { required: roles });
    }
    await next();
  });

/** Scopes limit API keys only; callers without an API key pass. */
export const requireApiKeyScope = (scope: ApiKeyScope) =>
  createMiddleware(async (c, next) => {
    const { apiKey } = principalOf(c);
    if (apiKey && !apiKey.scopes.includes(scope)) {
      throw new ForbiddenError(`API key lacks scope ${scope}`, 'INSUFFICIENT_SCOPE', { required: scope });
    }
    await next();
  });
