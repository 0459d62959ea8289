import { hasActingUser, jwtAuth, oauthIssuerOf, type Principal } from '@agentgw/auth';
import { UnauthorizedError, ValidationError } from '@agentgw/core';
import type { ServiceDeps } from '@agentgw/service-kit';
import { Hono, type Context } from 'hono';
import type Provider from 'oidc-provider';
import { z } from 'zod';
import { createAuthorizationServer } from './authorization-server.js';
import { listConnections, revokeConnection } from './connections.js';
import { answerInteraction, viewInteraction } from './interactions.js';
import { toProvider } from './provider-mount.js';

const Uid = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);
const Decision = z.object({ decision: z.enum(['approve', 'deny']) }).strict();

/** The signed-in person (console cookie or bearer login JWT). */
function signedInUser(c: Context): Principal & { userId: string } {
  const principal = c.get('principal');
  if (!hasActingUser(principal)) throw new UnauthorizedError();
  return principal;
}

function parsed<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(`Invalid ${what}`);
  return result.data;
}

/**
 * The gateway as the MCP clients' authorization server: oidc-provider on /oauth/* and the
 * discovery documents (RFC 8414 and OpenID), and the JSON the console's /connect page and
 * connected-clients lists use (/api/v1/oauth/*). The provider is built on first use (its keys
 * come from the database), once per process.
 */
export function oauthServerRoutes(deps: ServiceDeps): Hono {
  const app = new Hono();
  let provider: Promise<Provider | null> | null = null;
  const ready = () => (provider ??= createAuthorizationServer(deps).catch((err: unknown) => ((provider = null), Promise.reject(err))));
  const issuer = () => {
    const value = oauthIssuerOf(deps.config);
    if (value === undefined) throw new ValidationError('The OAuth authorization server is off: GATEWAY_PUBLIC_URL is not set');
    return value;
  };
  const requireProvider = async () => {
    const p = await ready();
    if (p === null) throw new ValidationError('The OAuth authorization server is off: GATEWAY_PUBLIC_URL is not set');
    return p;
  };

  app.all('/oauth/*', async (c) => toProvider(deps, await ready(), c));
  app.get('/.well-known/openid-configuration', async (c) => toProvider(deps, await ready(), c));
  app.get('/.well-known/oauth-authorization-server', async (c) => toProvider(deps, await ready(), c, '/.well-known/openid-configuration'));

  app.use('/api/v1/oauth/*', jwtAuth(deps.auth));
  app.get('/api/v1/oauth/interactions/:uid', async (c) => {
    const uid = parsed(Uid, c.req.param('uid'), 'interaction id');
    return c.json(await viewInteraction(deps.db, await requireProvider(), issuer(), signedInUser(c), uid));
  });
  app.post('/api/v1/oauth/interactions/:uid', async (c) => {
    const uid = parsed(Uid, c.req.param('uid'), 'interaction id');
    const { decision } = parsed(Decision, await c.req.json().catch(() => null), 'body: expected {"decision":"approve"|"deny"}');
    return c.json(await answerInteraction(deps.db, await requireProvider(), issuer(), signedInUser(c), uid, decision));
  });
  app.get('/api/v1/oauth/connections', async (c) => {
    const user = signedInUser(c);
    const userId = parsed(z.string().min(1).max(100), c.req.query('userId') ?? user.userId, 'userId');
    return c.json({ connections: await listConnections(deps.db, user, userId) });
  });
  app.delete('/api/v1/oauth/connections/:grantId', async (c) => {
    const grantId = parsed(z.string().min(1).max(200), c.req.param('grantId'), 'grant id');
    await revokeConnection(deps, signedInUser(c), grantId);
    return c.json({ success: true as const });
  });
  return app;
}
