import { createMiddleware } from 'hono/factory';
import { ForbiddenError, UnauthorizedError } from '@agentgw/core';
import type { ApiKeyScope, RoleName } from '@agentgw/db';
import type { Permission } from './permissions.js';
import type { Principal } from './principal.js';
import type { AuthMode, AuthService } from './service.js';

export interface FlexibleAuthOptions {
  /**
   * Session tokens reach the agent's upstream, whose URL its registrant controls, so they are
   * limited to what they exist for (MCP calls as the end user): only the MCP and tool-gate
   * endpoints pass `'accept'`. Default `'reject'`.
   */
  sessionTokens?: 'accept' | 'reject';
}

const authMiddleware = (auth: AuthService, mode: AuthMode, { sessionTokens = 'reject' }: FlexibleAuthOptions = {}) =>
  createMiddleware(async (c, next) => {
    const principal = await auth.authenticate(c.req.raw.headers, mode);
    if (principal.via === 'session_token' && sessionTokens === 'reject') {
      throw new ForbiddenError(
        'Session tokens are only accepted by the MCP and tool-gate endpoints',
        'SESSION_TOKEN_NOT_ALLOWED',
      );
    }
    c.set('principal', principal);
    await next();
  });

/** A user JWT only (`Authorization: Bearer <jwt>`). */
export const jwtAuth = (auth: AuthService) => authMiddleware(auth, 'jwt');

/** Any flexible-auth form: user JWT, API key + user, runtime token; session tokens only when `options` accept them. */
export const flexibleAuth = (auth: AuthService, options?: FlexibleAuthOptions) => authMiddleware(auth, 'flexible', options);

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
      throw new ForbiddenError(`Missing permission: ${permissions.join(' or ')}`, 'FORBIDDEN', { required: permissions });
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
