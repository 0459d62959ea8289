import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';

/** A browser navigation (link, redirect), as opposed to an API client or the console's fetch. */
export const wantsHtml = (c: Context): boolean => /\btext\/html\b/.test(c.req.header('accept') ?? '');

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * The authorization server's redirect is a cross-site navigation: the browser withholds the
 * console's SameSite=Strict cookie. Such a request (no credentials of its own) gets a page that
 * reloads the same URL from this origin, which the browser treats as same-site. Everything else
 * goes on to authentication.
 */
export const sameSiteBounce = createMiddleware(async (c, next) => {
  const headers = c.req.raw.headers;
  const bringsCredentials = ['authorization', 'x-api-key', 'x-gateway-session-token'].some((name) => headers.has(name));
  if (bringsCredentials || c.req.header('sec-fetch-site') !== 'cross-site' || !wantsHtml(c)) return next();
  const url = new URL(c.req.url);
  const target = escapeHtml(`${url.pathname}${url.search}`);
  c.header('cache-control', 'no-store');
  c.header('referrer-policy', 'no-referrer');
  return c.html(
    `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${target}"><title>Connecting…</title><p>Connecting… <a href="${target}">continue</a></p>`,
    200,
  );
});
