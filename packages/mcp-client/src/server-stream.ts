import { request, type Dispatcher } from 'undici';
import { parseSse } from './sse.js';
import type { UpstreamSession, UpstreamTarget } from './upstream-call.js';

/** What holding a server stream needs: the session's GET is made with its id and the target's headers. */
export interface ServerStreamOpening {
  dispatcher: Dispatcher;
  target: UpstreamTarget;
  session: UpstreamSession;
  /** The largest event read; a larger one ends the stream. */
  maxBytes: number;
  signal: AbortSignal;
  /** Every message on the stream (notifications, server requests), in order. */
  handOn: (message: unknown) => void;
}

/**
 * How holding a server stream ended. `unsupported`: the upstream has none for this session
 * (stateless, 405, the session is gone, or it answered without a stream); `ended`: it was open and
 * has ended, or `signal` aborted; `failed`: it could not be opened now (no connection, a 5xx, a
 * 409 while another holder's stream is still open, 408 or 429), so a later try may succeed.
 */
export type ServerStreamOutcome = 'unsupported' | 'ended' | 'failed';

/** Answers to the GET that may pass: the upstream is busy, overloaded or failing, not without a stream. */
const RETRYABLE_STATUS: ReadonlySet<number> = new Set([408, 409, 425, 429]);

/**
 * Holds a session upstream's server stream (HTTP GET) open, handing every message on, until it
 * ends or `signal` aborts: a gateway learns of list changes between calls.
 */
export async function holdServerStream(opening: ServerStreamOpening): Promise<ServerStreamOutcome> {
  const { target, session, signal } = opening;
  if (session.sessionId === null) return 'unsupported';
  let res: Dispatcher.ResponseData;
  try {
    res = await request(target.endpoint, {
      method: 'GET',
      dispatcher: opening.dispatcher,
      signal,
      headers: {
        ...target.headers,
        accept: 'text/event-stream',
        'mcp-session-id': session.sessionId,
        'mcp-protocol-version': session.protocolVersion,
      },
    });
  } catch {
    return signal.aborted ? 'ended' : 'failed';
  }
  if (res.statusCode !== 200 || !String(res.headers['content-type'] ?? '').includes('text/event-stream')) {
    await res.body.dump().catch(() => undefined);
    return res.statusCode >= 500 || RETRYABLE_STATUS.has(res.statusCode) ? 'failed' : 'unsupported';
  }
  try {
    for await (const event of parseSse(res.body as AsyncIterable<Buffer>, opening.maxBytes)) {
      if (event.event !== 'message') continue;
      let message: unknown;
      try {
        message = JSON.parse(event.data);
      } catch {
        continue;
      }
      opening.handOn(message);
    }
  } catch {
    res.body.destroy();
  }
  return 'ended';
}
