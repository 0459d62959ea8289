import { JSON_RPC } from '@agentgw/mcp-client';
import { clientGoneSignal, SseStream } from '@agentgw/service-kit';
import type { Context } from 'hono';
import { jsonResponse, rpcError } from '../mcp-transport/replies.js';
import type { Watch } from '../bus-wakeups.js';
import type { ResumptionRead, ResumptionStore } from './resumption-store.js';
import { eventId, parseEventId } from './resumption-ids.js';

/** How long a waiting resume goes without reading the store when no append wakes it (a missed bus message, an expired stream). */
export const RESUME_FALLBACK_MS = 2_000;

/**
 * GET with `Last-Event-ID` of a paused answer (SEP-1699): replays what the call sent after that
 * event, waits for the rest (on any replica), and ends after the response. An id of another
 * session, expired or forged, is a 404 that says nothing of whether it exists. Null when the
 * header is absent or not one of ours (the GET is then the session's server stream); otherwise
 * `released` is called once the answer ends.
 */
export async function resumeFromLastEventId(
  store: ResumptionStore,
  c: Context,
  sid: string,
  headers: Record<string, string>,
  released: () => void,
): Promise<Response | null> {
  const parsed = parseEventId(c.req.header('last-event-id') ?? '');
  if (!parsed) return null;
  // Watched before the first read, so an append after it is not missed.
  const watch = await store.watch(parsed.token);
  const first = await store.read(sid, parsed.token, parsed.index).catch(() => null);
  if (!first) {
    watch.close();
    released();
    return jsonResponse(rpcError(null, JSON_RPC.INVALID_REQUEST, 'Unknown or expired Last-Event-ID'), 404);
  }
  const connection = clientGoneSignal(c);
  const signal = connection.signal;
  const stream = new SseStream({ signal, onEnd: () => (connection.dispose(), released()) });
  void replay(store, { sid, token: parsed.token, stream, signal, watch }, first, parsed.index).finally(
    () => (watch.close(), stream.close()),
  );
  return stream.response(headers);
}

/** Sends kept events as they come, until the response went out, the stream expired or the client left. */
async function replay(
  store: ResumptionStore,
  on: { sid: string; token: string; stream: SseStream; signal: AbortSignal; watch: Watch },
  first: ResumptionRead,
  from: number,
): Promise<void> {
  let read: ResumptionRead | null = first;
  let after = from;
  while (read && on.stream.open) {
    for (const event of read.events) {
      on.stream.send({ event: 'message', id: eventId(on.token, event.index), data: JSON.parse(event.data) as unknown });
      after = event.index;
    }
    if (read.done) return;
    await on.watch.next(RESUME_FALLBACK_MS, on.signal);
    if (on.signal.aborted) return;
    read = await store.read(on.sid, on.token, after).catch(() => null);
  }
}
