import { parseJson, UnauthorizedError } from '@agentgw/core';
import type { ServiceDeps } from '@agentgw/service-kit';
import { Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import { z } from 'zod';
import { serviceTypesSchema } from './credentials.routes.js';
import { SERVICE_TOKEN_HEADER, VAULT_AUDIENCE, type Vault } from '@agentgw/credentials';

const internalResolveBody = z.object({
  userId: z.string().min(1).max(256),
  tenantId: z.string().min(1).max(256).nullable().default(null),
  serviceTypes: serviceTypesSchema,
});

/** Only other gateway services (service tokens for audience `vault`); user, API key and runtime credentials are refused. */
const serviceAuth = (deps: ServiceDeps) =>
  createMiddleware(async (c, next) => {
    const token = c.req.header(SERVICE_TOKEN_HEADER);
    if (!token) throw new UnauthorizedError(`${SERVICE_TOKEN_HEADER} required`);
    await deps.auth.verifyServiceToken(token, VAULT_AUDIENCE);
    await next();
  });

/**
 * `/internal/v1/*`: service-to-service API (invoke-proxy → vault in distributed mode). Keep it
 * off the public path router; the service token is the second line of defence.
 */
export function internalRoutes(deps: ServiceDeps, vault: Vault): Hono {
  const app = new Hono();
  app.use(serviceAuth(deps));
  app.post('/credentials/resolve', async (c) => {
    const input = await parseJson(c, internalResolveBody);
    return c.json(await vault.resolve(input));
  });
  return app;
}
