import {
  assertSameOrigin,
  clearConsoleSession,
  consoleSessionToken,
  isHttpsRequest,
  jwtAuth,
  setConsoleSession,
} from '@agentgw/auth';
import {
  SuccessBody,
  errorResponses,
  jsonBody,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { currentAccount, login, register } from './accounts.js';
import { LoginThrottle, clientAddress, loginLimitsFrom, trustedProxies } from './login-throttle.js';
import { AccountUser } from './users.routes.js';

const RegisterBody = z
  .object({
    email: z.email().max(320),
    password: z.string().min(8).max(1024),
    name: z.string().trim().min(1).max(200),
  })
  .openapi('RegisterRequest', {
    description: 'Other fields (roles, tenantId) are ignored: self-registered users are agent_creator with no tenant.',
  });

/** Where the login JWT goes: the body (API clients, as the spec says) or the web console's httpOnly cookie. */
const SessionDelivery = z.enum(['token', 'cookie']);

const LoginBody = z
  .object({
    email: z.string().min(1).max(320),
    password: z.string().min(1).max(1024),
    session: SessionDelivery.default('token').openapi({
      description:
        "`token` (default): the JWT is in the body. `cookie` (the web console): the JWT is set as an httpOnly, SameSite=Strict cookie (`__Host-agentgw_session`, Secure, over HTTPS; `agentgw_session` on plain HTTP) and left out of the body; the request must come from the console's own origin (Sec-Fetch-Site: same-origin or a matching Origin).",
    }),
  })
  .openapi('LoginRequest');

const CONSOLE_COOKIE_NOTE =
  "A request carrying the console cookie and no credentials of its own is authenticated by it wherever a user JWT is accepted (never on the MCP and tool-gate endpoints); when it changes state it must come from the console's own origin (Sec-Fetch-Site: same-origin, or a matching Origin), else 403 CSRF_REJECTED.";

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
  description: `After 5 failed attempts for one email, or 20 from one client address, within 15 minutes, further attempts get 429 with Retry-After (counted across replicas when they share Redis). ${CONSOLE_COOKIE_NOTE}`,
  request: { body: jsonBody(LoginBody) },
  responses: {
    200: jsonResponse(
      z.union([z.object({ token: z.string(), user: AccountUser }), z.object({ user: AccountUser })]),
      'Signed in: `{ token, user }`, or with `session: "cookie"` `{ user }` and the Set-Cookie',
    ),
    ...errorResponses(400, 401, 403, 429, 503),
  },
});

const logoutRoute = createRoute({
  method: 'post',
  path: '/logout',
  tags: ['Accounts'],
  summary: 'Sign the web console out: expires its session cookie',
  description:
    "Always answers 200 (with no cookie there is nothing to clear). A request carrying the cookie must come from the console's own origin (403 CSRF_REJECTED otherwise). Bearer tokens are not revoked: they expire on their own.",
  responses: {
    200: jsonResponse(SuccessBody, 'Signed out'),
    ...errorResponses(403),
  },
});

const sessionRoute = createRoute({
  method: 'get',
  path: '/session',
  tags: ['Accounts'],
  security: jwtSecurity,
  summary: 'The signed-in account (the web console restores its session from the cookie with it)',
  description: CONSOLE_COOKIE_NOTE,
  responses: {
    200: jsonResponse(z.object({ user: AccountUser }), "The caller's account"),
    ...errorResponses(401, 403),
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
    const { session, ...credentials } = c.req.valid('json');
    // Setting the cookie from a cross-site request would sign the victim's browser in as someone else (login CSRF).
    if (session === 'cookie') assertSameOrigin(c);
    const result = await login(deps, throttle, credentials, clientAddress(c, proxies));
    if (session === 'token') return c.json(result, 200);
    setConsoleSession(c, result.token, deps.auth.loginTokenLifetime, isHttpsRequest(c, deps.config.GATEWAY_PUBLIC_URL));
    return c.json({ user: result.user }, 200);
  });
  app.openapi(logoutRoute, (c) => {
    if (consoleSessionToken(c) !== null) assertSameOrigin(c);
    clearConsoleSession(c);
    return c.json({ success: true as const }, 200);
  });
  app.use('/session', jwtAuth(deps.auth));
  app.openapi(sessionRoute, async (c) => c.json({ user: await currentAccount(deps, c.var.principal) }, 200));
  return app;
}
