import { errorResponses, jsonBody, jsonResponse, openApiApp, type ServiceDeps } from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { login, register } from './accounts.js';
import { LoginThrottle, clientAddress, loginLimitsFrom, trustedProxies } from './login-throttle.js';
import { AccountUser } from './users.routes.js';

const RegisterBody = z
  .object({
    email: z.email().max(320),
    password: z.string().min(8).max(1024),
    name: z.string().trim().min(1).max(200),
  })
  .openapi('RegisterRequest', { description: 'Other fields (roles, tenantId) are ignored: self-registered users are agent_creator with no tenant.' });

const LoginBody = z
  .object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) })
  .openapi('LoginRequest');

const registerRoute = createRoute({
  method: 'post',
  path: '/register',
  tags: ['Accounts'],
  summary: 'Register an agent_creator account',
  request: { body: jsonBody(RegisterBody) },
  responses: {
    201: jsonResponse(z.object({ success: z.literal(true), user: AccountUser }), 'Registered'),
    ...errorResponses(400, 403, 409, 429),
  },
});

const loginRoute = createRoute({
  method: 'post',
  path: '/login',
  tags: ['Accounts'],
  summary: 'Exchange email and password for a user JWT',
  description:
    'After 5 failed attempts for one email, or 20 from one client address, within 15 minutes, further attempts get 429 with Retry-After (counted across replicas when they share Redis).',
  request: { body: jsonBody(LoginBody) },
  responses: {
    200: jsonResponse(z.object({ token: z.string(), user: AccountUser }), 'Signed in'),
    ...errorResponses(400, 401, 429, 503),
  },
});

export function authRoutes(deps: ServiceDeps): OpenAPIHono {
  const throttle = new LoginThrottle(deps.rateLimiter, loginLimitsFrom(deps.config));
  const proxies = trustedProxies(deps.config.TRUSTED_PROXIES);
  const app = openApiApp();
  app.openapi(registerRoute, async (c) => {
    const user = await register(deps, throttle, c.req.valid('json'), clientAddress(c, proxies));
    return c.json({ success: true as const, user }, 201);
  });
  app.openapi(loginRoute, async (c) => {
    const result = await login(deps, throttle, c.req.valid('json'), clientAddress(c, proxies));
    return c.json(result, 200);
  });
  return app;
}
