import { isHttpsRequest, setConsoleSession } from '@agentgw/auth';
import { AppError, createEgressDispatcher, egressFetch, egressPolicyFromConfig, RateLimitedError } from '@agentgw/core';
import { errorResponses, jsonResponse, peerAddress, type ServiceDeps } from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type Provider from 'oidc-provider';
import { CONSENT_PAGE_PATH } from './authorization-server.js';
import { ExternalLoginFailed, ExternalLogins } from './external-logins.js';
import { interactionOf } from './interactions.js';
import { PENDING_LOGIN_TTL_SECONDS } from './pending-external-logins.js';
import { askingBrowserOf } from './provider-mount.js';

/** Where every identity provider sends the browser back (register `<GATEWAY_PUBLIC_URL>` + this as the redirect URI). */
export const EXTERNAL_LOGIN_CALLBACK_PATH = '/api/v1/oauth/external-login/callback';

/** The cookie binding a started external login to the browser that started it (login CSRF). */
const BROWSER_COOKIE = 'agentgw_external_login';

const Uid = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an interaction id')
  .openapi({ param: { name: 'uid', in: 'path' }, description: 'The id in the console URL /connect/<uid>' });
const LoginId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'must be a login id')
  .openapi({ param: { name: 'loginId', in: 'path' }, description: 'A `login.id` of JWT_EXTERNAL_ISSUERS' });
const LoginOption = z.object({ id: z.string(), name: z.string() }).openapi('ExternalLoginOption');
const redirect = (what: string) => ({ description: what, headers: z.object({ location: z.string() }) });

const common = { tags: ['OAuth clients'] };
const optionsRoute = createRoute({
  ...common,
  method: 'get',
  path: '/interactions/{uid}/logins',
  summary: 'The external sign-ins ("continue with") the sign-in page offers for a pending MCP client sign-in',
  description: 'No authentication: the page shows them before anyone is signed in. Ids and display names only.',
  request: { params: z.object({ uid: Uid }) },
  responses: {
    200: jsonResponse(z.object({ logins: z.array(LoginOption) }), 'In configuration order'),
    ...errorResponses(400, 404),
  },
});
const startRoute = createRoute({
  ...common,
  method: 'get',
  path: '/interactions/{uid}/external/{loginId}',
  summary: 'Continue a pending MCP client sign-in at an external identity provider',
  description:
    'A browser navigation: redirects to the provider (authorization code, PKCE S256, state and nonce kept in the database) and sets an httpOnly cookie the callback must come back with. When the sign-in exists but the login cannot start (unknown login id, provider unreachable), a browser (Accept naming text/html) is redirected to `/connect/<uid>?login_error=unavailable` instead of the JSON error.',
  request: { params: z.object({ uid: Uid, loginId: LoginId }) },
  responses: {
    302: redirect(
      "To the identity provider's authorization endpoint, or with Accept text/html after a failure to /connect/<uid>?login_error=unavailable",
    ),
    ...errorResponses(400, 404, 429, 502, 503),
  },
});
const callbackRoute = createRoute({
  ...common,
  method: 'get',
  path: '/external-login/callback',
  summary: "The identity provider's redirect back: signs the person in to the console and returns to the consent page",
  description:
    "Checks state (once, and the browser's cookie), `iss` (RFC 9207), the code exchange and the ID token (signature, issuer, audience, nonce), maps the person to a gateway user as that issuer's bearer tokens are (linked subject, else verified email), sets the console session and redirects to `/connect/<uid>`. 401 EXTERNAL_LOGIN_REFUSED when a check fails; 403 EXTERNAL_USER_NOT_REGISTERED for a person with no gateway account. A browser (Accept naming text/html) is answered in pages instead: once the state is known and the cookie is the browser's that started the login, a refusal redirects to `/connect/<uid>?login_error=cancelled|refused|not_registered|unavailable`; before that (unknown, expired, replayed or forged state, another browser, 429) a short text/html page with the same status and no redirect.",
  responses: {
    302: redirect(
      "To the console's consent page /connect/<uid>, or with Accept text/html after a refusal to /connect/<uid>?login_error=<reason>",
    ),
    ...errorResponses(401, 403, 404, 429, 502, 503),
  },
});

/** Whether the request is a person's browser navigating (an explicit text/html media range with q > 0; a bare wildcard is not). */
function acceptsHtml(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='));
    return type === 'text/html' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** The words of the page a browser gets when its callback names no sign-in it may go back to (fixed text: nothing of the request is shown). */
const STRANDED_PAGE = (retryLater: boolean) =>
  [
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in not completed · Agent Gateway</title></head><body><main>',
    '<h1>Sign-in not completed</h1>',
    retryLater
      ? '<p>Too many sign-in attempts from this address. Wait a minute, then start again from your MCP client.</p>'
      : '<p>This sign-in link is unknown, expired or already used, or the sign-in was started in another browser. Start again from your MCP client, in this browser.</p>',
    '</main></body></html>',
  ].join('');

/**
 * A refused external login as its caller should see it: the browser on a known sign-in back on its
 * page with a reason word; any other browser a page with no link or redirect (its state names no
 * sign-in it may be sent to); JSON clients the error itself.
 */
function refusedInBrowser(c: Context, err: unknown): Response {
  const html = acceptsHtml(c.req.header('accept'));
  if (err instanceof ExternalLoginFailed) {
    if (!html) throw err.error;
    return c.redirect(`${CONSENT_PAGE_PATH}/${encodeURIComponent(err.uid)}?login_error=${err.reason}`, 302);
  }
  if (!html || !(err instanceof AppError)) throw err;
  c.header('content-security-policy', "default-src 'none'");
  c.header('cache-control', 'no-store');
  if (err instanceof RateLimitedError && err.retryAfterSeconds) c.header('retry-after', String(err.retryAfterSeconds));
  return c.html(STRANDED_PAGE(err.status === 429), err.status as 401);
}

/** The same per-address budget as the authorization server's own routes: each start writes a row. */
async function throttle(deps: ServiceDeps, c: Context): Promise<void> {
  const limit = await deps.rateLimiter.hit(`oauth:${peerAddress(c) ?? 'unknown'}`, {
    limit: deps.config.OAUTH_MAX_PER_ADDRESS,
    windowMs: 60_000,
  });
  if (!limit.allowed) throw new RateLimitedError('Too many requests', limit.retryAfterSeconds);
}

/** The browser's binding cookie, set now when it has none (one per browser, reused by every login it starts). */
function browserBinding(c: Context, secure: boolean): string {
  const existing = secure ? getCookie(c, BROWSER_COOKIE, 'host') : getCookie(c, BROWSER_COOKIE);
  if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const value = ExternalLogins.newBrowserBinding();
  // Lax, not Strict: the callback is a top-level navigation from the identity provider's site.
  const options = { httpOnly: true, sameSite: 'Lax', maxAge: PENDING_LOGIN_TTL_SECONDS, path: '/' } as const;
  setCookie(c, BROWSER_COOKIE, value, secure ? { ...options, secure: true, prefix: 'host' } : options);
  return value;
}

/**
 * "Continue with" an external issuer, registered on the console's /api/v1/oauth app before its
 * authentication (nobody is signed in yet). `provider` and `issuer` are the authorization
 * server's (its pending sign-ins are checked before a login starts).
 */
export function registerExternalLoginRoutes(
  app: OpenAPIHono,
  deps: ServiceDeps,
  server: { provider: () => Promise<Provider>; issuer: () => string },
): void {
  let logins: ExternalLogins | null = null;
  const loginsOf = (issuer: string) =>
    (logins ??= new ExternalLogins({
      db: deps.db,
      auth: deps.auth,
      clock: deps.clock,
      issuers: deps.config.JWT_EXTERNAL_ISSUERS,
      fetch: egressFetch(createEgressDispatcher(egressPolicyFromConfig(deps.config))),
      callbackUrl: `${issuer}${EXTERNAL_LOGIN_CALLBACK_PATH}`,
    }));
  const secure = (c: Context) => isHttpsRequest(c, deps.config.GATEWAY_PUBLIC_URL);

  app.openapi(optionsRoute, async (c) => {
    const issuer = server.issuer();
    await interactionOf(await server.provider(), issuer, c.req.valid('param').uid, askingBrowserOf(c));
    return c.json({ logins: loginsOf(issuer).options() }, 200);
  });
  app.openapi(startRoute, async (c) => {
    await throttle(deps, c);
    const { uid, loginId } = c.req.valid('param');
    const issuer = server.issuer();
    await interactionOf(await server.provider(), issuer, uid, askingBrowserOf(c));
    // The pending sign-in is known now: a browser whose provider cannot be reached goes back to it.
    const started = await loginsOf(issuer)
      .start(uid, loginId, browserBinding(c, secure(c)))
      .catch((err: unknown) =>
        refusedInBrowser(c, err instanceof AppError ? new ExternalLoginFailed(uid, 'unavailable', err) : err),
      );
    return started instanceof Response ? started : c.redirect(started, 302);
  });
  app.openapi(callbackRoute, async (c) => {
    const cookie = (secure(c) ? getCookie(c, BROWSER_COOKIE, 'host') : getCookie(c, BROWSER_COOKIE)) ?? null;
    const finished = await throttle(deps, c)
      .then(() => loginsOf(server.issuer()).finish(new URL(c.req.url).searchParams, cookie))
      .catch((err: unknown) => refusedInBrowser(c, err));
    if (finished instanceof Response) return finished;
    const { uid, user } = finished;
    setConsoleSession(c, await deps.auth.signUserToken(user), deps.auth.loginTokenLifetime, secure(c));
    return c.redirect(`${CONSENT_PAGE_PATH}/${uid}`, 302);
  });
}
