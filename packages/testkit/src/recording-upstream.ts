import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './read-body.js';

export interface RecordedRequest {
  method: string;
  /** Path with query string, as received. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON when the body is JSON, the raw text otherwise, undefined when empty. */
  body: unknown;
}

export type UpstreamHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface RecordingUpstream {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Default reply: 200 JSON echoing what arrived. */
const echo: UpstreamHandler = (req, res) =>
  replyJson(res, 200, { ok: true, method: req.method, path: req.path, body: req.body });

/**
 * A plain HTTP upstream (an agent runtime stand-in) on 127.0.0.1 with a random port that
 * records every request; `handler` decides the reply (see replyJson / replySse).
 */
export async function startRecordingUpstream(handler: UpstreamHandler = echo): Promise<RecordingUpstream> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: parseBody(raw),
      };
      requests.push(recorded);
      await handler(recorded, res);
    })().catch(() => {
      if (!res.headersSent) replyJson(res, 500, { error: 'fixture handler failed' });
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function parseBody(raw: string): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

export function replyJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Streams the events as `text/event-stream`, `delayMs` apart, then ends the response. */
export async function replySse(
  res: ServerResponse,
  events: { event?: string; data: unknown }[],
  delayMs = 0,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) {
    const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${data}\n\n`);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  res.end();
}
