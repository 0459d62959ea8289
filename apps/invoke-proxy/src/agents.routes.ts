import { flexibleAuth } from '@agentgw/auth';
import type { AgentRecord } from '@agentgw/catalog';
import { parseJson } from '@agentgw/core';
import { Hono } from 'hono';
import { z } from 'zod';
import { actingUser, invokeAgent, invokeResponse, type InvokeServices } from './invoke.js';
import { resolveRequiredCredentials } from './required-credentials.js';

/** The invoke body: a JSON object with a `message` string; every other field travels on too. */
const invokeBody = z.looseObject({ message: z.string({ error: 'is required and must be a string' }) });

/** Public agent info: nothing about the upstream, its secret or the runtime token. */
function publicAgent(agent: AgentRecord) {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    isActive: agent.isActive,
    requireConfirmation: agent.requireConfirmation,
    requiredCredentials: agent.requiredCredentials,
    tenantId: agent.tenantId,
  };
}

export function agentsRoutes(services: InvokeServices): Hono {
  const { agents } = services;
  const app = new Hono();
  // Every invoke answer carries its request id, refusals included, so any call can be traced.
  app.use('/:agentId/invoke', async (c, next) => {
    c.header('X-Gateway-Request-ID', c.var.requestId);
    await next();
  });
  // Session tokens are refused (the default): an upstream holding one must not invoke agents as its user.
  app.use('*', flexibleAuth(services.auth));

  app.get('/:agentId', async (c) => {
    const agent = await agents.getFor(c.var.principal, c.req.param('agentId'));
    return c.json({ agent: publicAgent(agent) });
  });

  app.get('/:agentId/credentials-check', async (c) => {
    const agent = await agents.getFor(c.var.principal, c.req.param('agentId'));
    await resolveRequiredCredentials(services.credentials, agent, actingUser(c.var.principal));
    return c.json({ ok: true });
  });

  // The body size cap (413) is the service app's body limit, applied before this handler reads.
  app.post('/:agentId/invoke', async (c) => {
    const { requestId } = c.var;
    const agent = await agents.getFor(c.var.principal, c.req.param('agentId'));
    await parseJson(c, invokeBody);
    const answer = await invokeAgent(services, {
      principal: c.var.principal,
      agent,
      requestId,
      headers: c.req.raw.headers,
      body: await c.req.text(), // validated above; forwarded byte for byte
      signal: c.req.raw.signal,
    });
    return invokeResponse(answer, requestId);
  });

  return app;
}
