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
 * Holds a session upstream's server stream (HTTP GET) open, handing every message on, until it
 * ends or `signal` aborts: a gateway learns of list changes between calls. `unsupported`: the
 * upstream has no such stream (stateless, or it answered without one); `ended`: it was open and has ended.
 */
export async function holdServerStream(opening: ServerStreamOpening): Promise<'unsupported' | 'ended'> {
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
    return signal.aborted ? 'ended' : 'unsupported';
  }
  if (res.statusCode !== 200 || !String(res.headers['content-type'] ?? '').includes('text/event-stream')) {
    await res.body.dump().catch(() => undefined);
    return 'unsupported';
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
