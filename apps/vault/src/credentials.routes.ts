import { flexibleAuth, hasActingUser, type Principal } from '@agentgw/auth';
import type { OAuthConnect, Vault } from '@agentgw/credentials';
import { ForbiddenError, parseJson, ValidationError } from '@agentgw/core';
import { openApiApp, type ServiceDeps } from '@agentgw/service-kit';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  apiKeyBody,
  checkRoute,
  deleteRoute,
  jwtBody,
  listRoute,
  oauthAuthRoute,
  oauthCallbackRoute,
  resolveBody,
  resolveRoute,
  serviceTypeSchema,
  sharedCallbackRoute,
  storeApiKeyRoute,
  storeJwtRoute,
  userCredentialsRoute,
} from './credentials.openapi.js';
import { sameSiteBounce, wantsHtml } from './same-site-bounce.js';

/** The user the request acts for; a bare runtime token speaks for an agent, not a user. */
function actingUser(c: Context): { userId: string; tenantId: string | null } {
  const principal: Principal = c.get('principal');
  if (!hasActingUser(principal)) {
    throw new ForbiddenError(
      'Credentials belong to a user: send a user JWT or an API key with X-User-Id',
      'USER_REQUIRED',
    );
  }
  return { userId: principal.userId, tenantId: principal.tenantId };
}

function pathServiceType(c: Context): string {
  const parsed = serviceTypeSchema.safeParse(c.req.param('serviceType'));
  if (!parsed.success) throw new ValidationError('serviceType: must match ^[a-z][a-z0-9_]*$', { field: 'serviceType' });
  return parsed.data;
}

/**
 * `/api/v1/credentials/*`: the caller's own vault entries (flexible auth; API keys need the
 * matching scope). Session tokens are refused: the agent's upstream holds one, and it must not
 * read or change the end user's credentials. Bodies are parsed in the handlers, after the
 * caller is known to act for a user.
 */
export function credentialsRoutes(deps: ServiceDeps, vault: Vault, connect: OAuthConnect): OpenAPIHono {
  const app = openApiApp();
  app.use('/oauth/:serviceType/callback', sameSiteBounce);
  app.use('/oauth/callback', sameSiteBounce);
  app.use('*', flexibleAuth(deps.auth));

  app.openapi(listRoute, async (c) => {
    const { userId } = actingUser(c);
    return c.json({ credentials: await vault.list(userId) }, 200);
  });

  /** Stores the caller's credential of one kind (what the body gave, read after the caller is known). */
  const stored = async (
    c: Context,
    user: { userId: string; tenantId: string | null },
    secret: { kind: 'jwt' | 'api_key'; serviceType: string; secret: string; expiresAt: Date | null },
  ) => {
    const credential = await vault.store({ ...user, ...secret });
    return c.json({ success: true as const, credential }, 201);
  };
  app.openapi(storeJwtRoute, async (c) => {
    const user = actingUser(c);
    const { serviceType, token, expiresAt } = await parseJson(c, jwtBody);
    return stored(c, user, { kind: 'jwt', serviceType, secret: token, expiresAt: new Date(expiresAt) });
  });
  app.openapi(storeApiKeyRoute, async (c) => {
    const user = actingUser(c);
    const { serviceType, apiKey } = await parseJson(c, apiKeyBody);
    return stored(c, user, { kind: 'api_key', serviceType, secret: apiKey, expiresAt: null });
  });

  app.openapi(resolveRoute, async (c) => {
    const { userId, tenantId } = actingUser(c);
    const { serviceTypes } = await parseJson(c, resolveBody);
    return c.json(await vault.resolve({ userId, tenantId, serviceTypes, recipient: { kind: 'owner' } }), 200);
  });

  app.openapi(checkRoute, async (c) => {
    const { userId, tenantId } = actingUser(c);
    return c.json(await vault.check({ userId, tenantId, serviceType: pathServiceType(c) }), 200);
  });

  app.openapi(oauthAuthRoute, async (c) => {
    const { userId, tenantId } = actingUser(c);
    const { authUrl } = await connect.start({ userId, tenantId, serviceType: pathServiceType(c) });
    return wantsHtml(c) ? c.redirect(authUrl, 302) : c.json({ authUrl }, 200);
  });

  /** Completes the flow the callback returns to (the service type of its path, or the one its state names). */
  const completed = async (c: Context, serviceType: string | null) => {
    const { userId } = actingUser(c);
    const { credential, returnTo } = await connect.complete({ userId, serviceType, callback: new URL(c.req.url) });
    return wantsHtml(c) ? c.redirect(returnTo, 302) : c.json({ success: true as const, credential, returnTo }, 200);
  };
  app.openapi(oauthCallbackRoute, (c) => completed(c, pathServiceType(c)));
  app.openapi(sharedCallbackRoute, (c) => completed(c, null));

  app.openapi(userCredentialsRoute, async (c) => {
    const { userId } = c.req.valid('param');
    return c.json({ userId, credentials: await vault.list(userId) }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { userId } = actingUser(c);
    await vault.remove(userId, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });

  return app;
}
