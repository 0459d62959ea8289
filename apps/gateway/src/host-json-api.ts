import type { Host } from '@agentgw/service-kit';

/** A JSON body as the suites read it. */
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One JSON (or MCP) request to a host in process as `token`'s bearer (`path` may be a full URL of the gateway's: a callback), its status and parsed body. */
export type HostJsonApi = (
  method: string,
  path: string,
  token: string,
  body?: unknown,
) => Promise<{ status: number; body: Json }>;

/** The all-in-one suites' request helper over `host()` (a getter: the host is started in beforeAll). */
export function hostJsonApi(host: () => Host): HostJsonApi {
  return async (method, path, token, body) => {
    const url = path.startsWith('http') ? new URL(path) : null;
    const res = await host().app.request(url ? url.pathname + url.search : path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
  };
}
