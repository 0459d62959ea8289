import type { Context } from 'hono';
import { nodeOutgoing } from './hono-internals.js';

/** Whether the client of one request is still there, and a signal for the work done on its behalf. */
export interface ClientConnection {
  /** Aborts once the client disconnects before its answer is complete (or `abort()` is called). Made on first read. */
  readonly signal: AbortSignal;
  /** Whether the client has gone (or `abort()` was called); never makes the signal. */
  gone(): boolean;
  abort(): void;
  /** Stops watching; call once the answer no longer depends on the client. */
  dispose(): void;
}

/**
 * The client's connection to one request. On Node's server the response's `close` event is
 * watched directly, and the AbortSignal is made only when something reads it: a signal (and
 * certainly the Request's own, which materialises the whole web Request) costs more than the
 * rest of a cached answer's bookkeeping. Elsewhere (`app.request` in tests) the Request's
 * signal is followed.
 */
export function clientGoneSignal(c: Context): ClientConnection {
  let controller: AbortController | undefined;
  let gone = false;
  const abort = () => {
    gone = true;
    controller?.abort();
  };
  const connection = (dispose: () => void): ClientConnection => ({
    get signal() {
      controller ??= new AbortController();
      if (gone) controller.abort();
      return controller.signal;
    },
    gone: () => gone,
    abort,
    dispose,
  });
  const outgoing = nodeOutgoing(c);
  if (outgoing) {
    const onClose = () => {
      if (!outgoing.writableFinished) abort();
    };
    outgoing.once('close', onClose);
    return connection(() => outgoing.off('close', onClose));
  }
  const signal = c.req.raw.signal;
  signal.addEventListener('abort', abort, { once: true });
  return connection(() => signal.removeEventListener('abort', abort));
}
