import { createMiddleware } from 'hono/factory';
import { ForbiddenError, UnauthorizedError } from '@agentgw/core';
import type { ApiKeyScope, RoleName } from '@agentgw/db';
import type { Permission } from './permissions.js';
import type { Principal } from './principal.js';
import type { AuthMode, AuthService } from './service.js';

const authMiddleware = (auth: AuthService, mode: AuthMode) =>
  createMiddleware(async (c, next) => {
    c.set('principal', await auth.authenticate(c.req.raw.headers, mode));
    await next();
  });

/** A user JWT only (`Authorization: Bearer <jwt>`). */
export const jwtAuth = (auth: AuthService) => authMiddleware(auth, 'jwt');

/** Any flexible-auth form: user JWT, API key + user, runtime token, session token. */
export const flexibleAuth = (auth: AuthService) => authMiddleware(auth, 'flexible');

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
