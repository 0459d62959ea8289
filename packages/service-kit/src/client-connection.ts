import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';

/**
 * An AbortSignal that fires when the client disconnects before its answer is complete. On
 * Node's server the response's `close` event is watched directly: materialising the Request's
 * own AbortSignal costs more than the rest of a forwarded call's bookkeeping. Elsewhere
 * (`app.request` in tests) the Request's signal is used.
 */
export function clientGoneSignal(c: Context): { signal: AbortSignal; abort: () => void; dispose: () => void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (outgoing && typeof outgoing.once === 'function') {
    const onClose = () => {
      if (!outgoing.writableFinished) abort();
    };
    outgoing.once('close', onClose);
    return { signal: controller.signal, abort, dispose: () => outgoing.off('close', onClose) };
  }
  const signal = c.req.raw.signal;
  signal.addEventListener('abort', abort, { once: true });
  return { signal: controller.signal, abort, dispose: () => signal.removeEventListener('abort', abort) };
}
