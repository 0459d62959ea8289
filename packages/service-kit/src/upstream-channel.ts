import diagnostics from 'node:diagnostics_channel';

/**
 * Outbound HTTP seen through undici's diagnostics channels: every `undici.request` and global
 * `fetch` (invoke and MCP upstreams, the vault client) publishes here, so latency and trace
 * propagation need no change at the call sites. Subscribed only while someone listens.
 */

/** The part of undici's request object the channel hands us that we rely on. */
interface UndiciRequest {
  origin: string | URL;
  method: string;
  path: string;
  addHeader(name: string, value: string): unknown;
}

export interface UpstreamResponse {
  origin: string;
  method: string;
  status: number;
  seconds: number;
}

/** Called when a request is created: may add headers (traceparent) and return what to call when it ends. */
export type UpstreamStartHook = (
  request: UndiciRequest,
) => ((outcome: { status?: number; error?: unknown }) => void) | undefined;

const responseListeners = new Set<(r: UpstreamResponse) => void>();
const startHooks = new Set<UpstreamStartHook>();
const inFlight = new WeakMap<
  object,
  { started: number; ends: ((outcome: { status?: number; error?: unknown }) => void)[] }
>();

function onCreate(message: unknown): void {
  const { request } = message as { request: UndiciRequest };
  const ends: ((outcome: { status?: number; error?: unknown }) => void)[] = [];
  for (const hook of startHooks) {
    const end = hook(request);
    if (end) ends.push(end);
  }
  inFlight.set(request, { started: performance.now(), ends });
}

function onHeaders(message: unknown): void {
  const { request, response } = message as { request: UndiciRequest; response: { statusCode: number } };
  const entry = inFlight.get(request);
  if (!entry) return;
  inFlight.delete(request);
  const seconds = (performance.now() - entry.started) / 1000;
  for (const end of entry.ends) end({ status: response.statusCode });
  const origin = String(request.origin);
  for (const listener of responseListeners)
    listener({ origin, method: request.method, status: response.statusCode, seconds });
}

function onError(message: unknown): void {
  const { request, error } = message as { request: UndiciRequest; error: unknown };
  const entry = inFlight.get(request);
  if (!entry) return;
  inFlight.delete(request);
  for (const end of entry.ends) end({ error });
}

const channels: [string, (message: unknown) => void][] = [
  ['undici:request:create', onCreate],
  ['undici:request:headers', onHeaders],
  ['undici:request:error', onError],
];

function resubscribe(): void {
  const wanted = responseListeners.size + startHooks.size > 0;
  for (const [name, handler] of channels) {
    if (wanted) diagnostics.subscribe(name, handler);
    else diagnostics.unsubscribe(name, handler);
  }
}

function add<T>(set: Set<T>, item: T): () => void {
  const wasEmpty = responseListeners.size + startHooks.size === 0;
  set.add(item);
  if (wasEmpty) resubscribe();
  return () => {
    if (set.delete(item) && responseListeners.size + startHooks.size === 0) resubscribe();
  };
}

/** Hears every outbound response head (origin, status, seconds since the request was created). */
export function onUpstreamResponse(listener: (r: UpstreamResponse) => void): () => void {
  return add(responseListeners, listener);
}

/** Runs `hook` as each outbound request is created (before it is sent): how traceparent gets in. */
export function onUpstreamStart(hook: UpstreamStartHook): () => void {
  return add(startHooks, hook);
}
