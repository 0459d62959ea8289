import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestHeaders } from '@agentgw/core';
import type { Context } from 'hono';

/*
 * Every place the kit reaches past Hono's public API, in one module. Each assumption is checked
 * through a real `@hono/node-server` request by hono-internals.test.ts, so a Hono or adapter
 * upgrade that breaks one fails there, not in production.
 */

/** Node's request behind the node adapter (`c.env.incoming`), with the adapter's body hook; absent under `app.request`. */
export type NodeIncoming = IncomingMessage & { rawBody?: Buffer };

/** Node's request behind `@hono/node-server`; undefined elsewhere (`app.request` in tests). */
export function nodeIncoming(c: Context): NodeIncoming | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming && typeof incoming.on === 'function' ? incoming : undefined;
}

/**
 * The TCP peer's address (the socket's, never a header); undefined outside the node adapter.
 * Reads only `incoming.socket`, so a test may hand `app.request` an env naming just the peer.
 */
export function peerAddress(c: Context): string | undefined {
  return (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
}

/**
 * Node's response behind `@hono/node-server`; undefined elsewhere. Headers set on it before the
 * route answers are sent with the answer, under the answer's own headers of the same name.
 */
export function nodeOutgoing(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  return outgoing && typeof outgoing.setHeader === 'function' ? outgoing : undefined;
}

/**
 * Makes `c.req.header(name)` read Node's raw headers (as `requestHeader` does) instead of the web
 * Headers the adapter builds on first use, converting and validating every header: every Hono
 * validator asks for Content-Type, whatever its target, and that Headers was ~2 % of an invoke.
 * Same answers (names case-insensitive, repeats joined with ", "); `header()` with no name keeps
 * Hono's own. Nothing changes under `app.request` (no Node request).
 */
export function readHeadersFromNode(c: Context): void {
  if (!nodeIncoming(c)) return;
  const req = c.req;
  const own = req.header;
  // One closure per request; the raw header list is read only when a header is asked for.
  req.header = ((name?: string) =>
    name === undefined ? own.call(req) : (requestHeaders(c).get(name) ?? undefined)) as typeof req.header;
}

/**
 * A header every answer to this request carries unless the answer sets its own: on Node's
 * response (no web Headers made, as `c.header` makes before the route answers), else `c.header`.
 */
export function answerHeader(c: Context, name: string, value: string): void {
  const outgoing = nodeOutgoing(c);
  if (outgoing) outgoing.setHeader(name, value);
  else c.header(name, value);
}

/**
 * Hands a body already read from Node's stream to Hono and the adapter: `c.req.text()`/`json()`
 * answer from Hono's body cache, and a web Request built later (`c.req.raw.*()`) reads these bytes
 * through the adapter's `rawBody` hook instead of the drained stream.
 */
export function provideBody(c: Context, incoming: NodeIncoming, body: Buffer, text: string): void {
  incoming.rawBody = body;
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
}

/** Hono's key for the handler it wraps when a sub-app with its own error handler is mounted. */
const COMPOSED_HANDLER = '__COMPOSED_HANDLER';

/** The handler a matched route's handler wraps (sub-app with `onError`), or undefined. */
export function composedHandlerOf(handler: unknown): unknown {
  return typeof handler === 'function' ? (handler as unknown as Record<string, unknown>)[COMPOSED_HANDLER] : undefined;
}
