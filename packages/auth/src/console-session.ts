import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { ForbiddenError } from '@agentgw/core';

/**
 * The web console's session: the login JWT in an httpOnly cookie (so an injected script cannot
 * read it), instead of in the page's storage. Over HTTPS the cookie is `__Host-agentgw_session`
 * (Secure, Path=/, no Domain: no sibling host can set or overwrite it); on plain HTTP
 * (development) it is `agentgw_session`.
 */
export const CONSOLE_COOKIE = 'agentgw_session';

/** Methods that change state: a cookie-authenticated one must prove it comes from the console's own origin. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether the browser reached us over HTTPS (directly, through a proxy's X-Forwarded-Proto, or as GATEWAY_PUBLIC_URL says). */
export function isHttpsRequest(c: Context, publicUrl?: string): boolean {
  const forwarded = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return new URL(c.req.url).protocol === 'https:' || forwarded === 'https' || publicUrl?.startsWith('https:') === true;
}

/** Sets the console cookie carrying `token` for `maxAgeSeconds` (the token's own lifetime). */
export function setConsoleSession(c: Context, token: string, maxAgeSeconds: number, secure: boolean): void {
  const common = { httpOnly: true, sameSite: 'Strict', maxAge: maxAgeSeconds } as const;
  if (secure) setCookie(c, CONSOLE_COOKIE, token, { ...common, secure: true, path: '/', prefix: 'host' });
  else setCookie(c, CONSOLE_COOKIE, token, { ...common, path: '/' });
}

/** Expires both spellings of the console cookie (logout). */
export function clearConsoleSession(c: Context): void {
  deleteCookie(c, CONSOLE_COOKIE, { path: '/', secure: true, prefix: 'host' });
  deleteCookie(c, CONSOLE_COOKIE, { path: '/' });
}

/**
 * The JWT of the console cookie, or null. The `__Host-` cookie is always trusted; the plain one
 * only on a plain-HTTP request, so over HTTPS a cookie tossed by a sibling subdomain is ignored.
 */
export function consoleSessionToken(c: Context): string | null {
  const token = getCookie(c, CONSOLE_COOKIE, 'host') ?? (isHttpsRequest(c) ? undefined : getCookie(c, CONSOLE_COOKIE));
  return token ? token : null;
}

/** Whether this request's method changes state (CSRF applies). */
export const changesState = (c: Context): boolean => !SAFE_METHODS.has(c.req.method.toUpperCase());

/**
 * CSRF protection for cookie-authenticated requests: the browser's own word that the page making
 * the request is on this origin. `Sec-Fetch-Site` (set by the browser, never by a script) must be
 * `same-origin`; a browser that does not send it must send an `Origin` naming this host. A
 * sibling subdomain is same-site (SameSite lets the cookie through) but not same-origin, so it
 * is refused too.
 */
export function assertSameOrigin(c: Context): void {
  const site = c.req.header('sec-fetch-site');
  if (site === undefined ? originIsThisHost(c) : site === 'same-origin') return;
  throw new ForbiddenError(
    'A request signed in with the console cookie must come from the console itself (Sec-Fetch-Site: same-origin or a matching Origin)',
    'CSRF_REJECTED',
  );
}

function originIsThisHost(c: Context): boolean {
  const origin = c.req.header('origin');
  if (!origin || origin === 'null') return false;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return false;
  }
  const host = c.req.header('x-forwarded-host')?.split(',')[0]?.trim() ?? new URL(c.req.url).host;
  return originHost.toLowerCase() === host.toLowerCase();
}
