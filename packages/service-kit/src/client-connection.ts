import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { nodeOutgoing } from './hono-internals.js';

/**
 * A client's going away as undici's `request` takes it besides an AbortSignal: one `'abort'`
 * event and an `aborted` flag. The connection itself, so no AbortController is made per call
 * (one cost ~2 % of an invoke in the profile).
 */
export interface AbortEvents extends EventEmitter {
  readonly aborted: boolean;
}

/** A caller's going away in either form undici's `request` takes: the connection's events, or a signal. */
export type ClientGone = AbortEvents | AbortSignal;

/** Whether the client of one request is still there, and a signal for the work done on its behalf. */
export interface ClientConnection {
  /** Aborts once the client disconnects before its answer is complete (or `abort()` is called). Made on first read. */
  readonly signal: AbortSignal;
  /** The same as `'abort'` events, for undici: nothing is made. */
  readonly abortEvents: AbortEvents;
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
  const outgoing = nodeOutgoing(c);
  if (outgoing) return new ResponseConnection(outgoing);
  return new RequestConnection(c.req.raw.signal);
}

/**
 * What both forms share: the lazily made signal, the gone flag and the `'abort'` event. A class,
 * not an object literal with a getter and closures: one allocation per request on the hot path
 * instead of six.
 */
abstract class WatchedConnection extends EventEmitter implements ClientConnection, AbortEvents {
  private controller: AbortController | undefined;
  private isGone = false;

  get abortEvents(): AbortEvents {
    return this;
  }

  get aborted(): boolean {
    return this.isGone;
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.isGone) this.controller.abort();
    return this.controller.signal;
  }

  gone(): boolean {
    return this.isGone;
  }

  abort(): void {
    if (this.isGone) return;
    this.isGone = true;
    this.controller?.abort();
    this.emit('abort');
  }

  abstract dispose(): void;
}

/** Node's server: the response closing before it finished is the client going away. */
class ResponseConnection extends WatchedConnection {
  private readonly onClose = (): void => {
    if (!this.outgoing.writableFinished) this.abort();
  };

  constructor(private readonly outgoing: ServerResponse) {
    super();
    // `on`, not `once`: 'close' comes once, and `once` would wrap the listener in another closure.
    outgoing.on('close', this.onClose);
  }

  dispose(): void {
    this.outgoing.off('close', this.onClose);
  }
}

/** Elsewhere (`app.request` in tests): the Request's own signal. */
class RequestConnection extends WatchedConnection {
  private readonly onAbort = (): void => this.abort();

  constructor(private readonly requestSignal: AbortSignal) {
    super();
    requestSignal.addEventListener('abort', this.onAbort, { once: true });
  }

  dispose(): void {
    this.requestSignal.removeEventListener('abort', this.onAbort);
  }
}
