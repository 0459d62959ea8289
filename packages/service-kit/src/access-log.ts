import type { Principal } from '@agentgw/auth';
import type { Logger } from '@agentgw/core';
import type { Context, MiddlewareHandler } from 'hono';
import { nodeOutgoing } from './hono-internals.js';

/** What a route adds to its request's access-log line (MCP: the JSON-RPC method, the tool, the batch size). */
export interface AccessLogFields {
  rpcMethod?: string;
  toolName?: string;
  rpcBatch?: number;
}

declare module 'hono' {
  interface ContextVariableMap {
    /** The current request's extra access-log fields; unset when this request is not logged. */
    accessLog: AccessLogFields | undefined;
  }
}

/**
 * Records `fields` on the current request's access-log line. A no-op (nothing allocated, nothing
 * kept) when the access log is off or this request was not sampled.
 */
export function annotateAccessLog(c: Context, fields: AccessLogFields): void {
  const record = c.get('accessLog');
  if (record) Object.assign(record, fields);
}

/** Who called, as the line names them: the kind of credential and the id it proved, never the credential. */
type Caller = { principal: 'user' | 'api_key' | 'agent' | 'session'; principalId: string | null; userId?: string };

function callerOf(p: Principal | undefined): Caller | undefined {
  if (!p) return undefined;
  const caller: Caller =
    p.via === 'jwt' || p.via === 'oauth'
      ? { principal: 'user', principalId: p.userId }
      : p.via === 'api_key'
        ? { principal: 'api_key', principalId: p.apiKey?.id ?? null }
        : { principal: p.via === 'runtime_token' ? 'agent' : 'session', principalId: p.agentId };
  // The user an API key or a session token acts for, when it is not the principal itself.
  if (p.userId && p.userId !== caller.principalId) caller.userId = p.userId;
  return caller;
}

const contentLength = (value: string | number | string[] | undefined | null): number | undefined => {
  const n = Number(value ?? Number.NaN);
  return Number.isFinite(n) ? n : undefined;
};

/**
 * One `info` line per request, written when the answer has been sent (a stream: when it ends):
 * method, route pattern, path without its query, status, duration, request id, caller, bytes,
 * and what the route annotated. Never headers, query values or bodies. `sample` (0..1) is the
 * share of requests logged; undefined when the log is off, so the host adds no layer at all.
 */
export function accessLog(
  logger: Logger,
  options: { enabled: boolean; sample: number },
): MiddlewareHandler | undefined {
  if (!options.enabled || options.sample <= 0) return undefined;
  const { sample } = options;
  return async (c, next) => {
    if ((sample < 1 && Math.random() >= sample) || !logger.isLevelEnabled('info')) return next();
    const started = performance.now();
    const annotations: AccessLogFields = {};
    c.set('accessLog', annotations);
    const outgoing = nodeOutgoing(c);
    const socket = outgoing?.socket;
    const writtenBefore = socket?.bytesWritten ?? 0;
    try {
      await next();
    } finally {
      const line = (status: number, bytesOut: number | undefined, extra?: { aborted: true }) => {
        const route = status === 404 && c.req.routePath.endsWith('*') ? 'unmatched' : c.req.routePath;
        logger.info(
          {
            method: c.req.method,
            route,
            path: c.req.path,
            status,
            durationMs: Math.round((performance.now() - started) * 10) / 10,
            requestId: c.get('requestId'),
            ...callerOf(c.get('principal')),
            bytesIn: contentLength(c.req.header('content-length')),
            bytesOut,
            ...annotations,
            ...extra,
          },
          'request',
        );
      };
      if (outgoing && socket && typeof outgoing.once === 'function') {
        // Node's server: the line waits for the answer to be written (a stream until it ends).
        // Bytes are those written to the connection for this answer, status line and headers included.
        const finish = () =>
          line(
            outgoing.headersSent ? outgoing.statusCode : c.res.status,
            socket.bytesWritten - writtenBefore,
            outgoing.writableFinished ? undefined : { aborted: true },
          );
        if (outgoing.closed) finish();
        else outgoing.once('close', finish);
      } else {
        line(c.res.status, contentLength(c.res.headers.get('content-length')));
      }
    }
  };
}
