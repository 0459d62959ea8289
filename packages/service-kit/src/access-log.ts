import type { Context } from 'hono';

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
