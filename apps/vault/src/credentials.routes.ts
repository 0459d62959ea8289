import { flexibleAuth, requireApiKeyScope, type Principal } from '@agentgw/auth';
import { ForbiddenError, NotImplementedError, parseJson, ValidationError } from '@agentgw/core';
import type { ServiceDeps } from '@agentgw/service-kit';
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { Vault } from '@agentgw/credentials';

export const SERVICE_TYPE_PATTERN = /^[a-z][a-z0-9_]*$/;
export const serviceTypeSchema = z.string().max(64).regex(SERVICE_TYPE_PATTERN, 'must match ^[a-z][a-z0-9_]*$');
export const serviceTypesSchema = z.array(serviceTypeSchema).max(100);

const jwtBody = z.object({
  serviceType: serviceTypeSchema,
  token: z.string().min(1).max(16_384),
  expiresAt: z.iso.datetime({ offset: true }),
});
const apiKeyBody = z.object({
  serviceType: serviceTypeSchema,
  apiKey: z.string().min(1).max(16_384),
});
const resolveBody = z.object({ serviceTypes: serviceTypesSchema });

/** The user the request acts for; a bare runtime token speaks for an agent, not a user. */
function actingUser(c: Context): { userId: string; tenantId: string | null } {
  const principal: Principal = c.get('principal');
  if (!principal.userId) {
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
 * read or change the end user's credentials.
 */
export function credentialsRoutes(deps: ServiceDeps, vault: Vault): Hono {
  const app = new Hono();
  app.use(flexibleAuth(deps.auth));

  app.get('/', requireApiKeyScope('credentials:read'), async (c) => {
    const { userId } = actingUser(c);
    return c.json({ credentials: await vault.list(userId) });
  });

  app.post('/jwt', requireApiKeyScope('credentials:write'), async (c) => {
    const { userId, tenantId } = actingUser(c);
    const body = await parseJson(c, jwtBody);
    const credential = await vault.store({
      userId,
      tenantId,
      serviceType: body.serviceType,
      kind: 'jwt',
      secret: body.token,
      expiresAt: new Date(body.expiresAt),
    });
    return c.json({ success: true, credential }, 201);
  });

  app.post('/apikey', requireApiKeyScope('credentials:write'), async (c) => {
    const { userId, tenantId } = actingUser(c);
    const body = await parseJson(c, apiKeyBody);
    const credential = await vault.store({
      userId,
      tenantId,
      serviceType: body.serviceType,
      kind: 'api_key',
      secret: body.apiKey,
      expiresAt: null,
    });
    return c.json({ success: true, credential }, 201);
  });

  app.post('/resolve', requireApiKeyScope('credentials:resolve'), async (c) => {
    const { userId, tenantId } = actingUser(c);
    const { serviceTypes } = await parseJson(c, resolveBody);
    return c.json(await vault.resolve({ userId, tenantId, serviceTypes }));
  });

  app.get('/check/:serviceType', requireApiKeyScope('credentials:resolve'), async (c) => {
    const { userId, tenantId } = actingUser(c);
    return c.json(await vault.check({ userId, tenantId, serviceType: pathServiceType(c) }));
  });

  app.get('/oauth/:serviceType/auth', () => {
    throw new NotImplementedError('OAuth credential connection is not implemented yet; store a JWT or API key instead');
  });
  app.get('/oauth/:serviceType/callback', () => {
    throw new NotImplementedError('OAuth credential connection is not implemented yet; store a JWT or API key instead');
  });

  app.delete('/:id', requireApiKeyScope('credentials:write'), async (c) => {
    const { userId } = actingUser(c);
    await vault.remove(userId, c.req.param('id'));
    return c.json({ success: true });
  });

  return app;
}
