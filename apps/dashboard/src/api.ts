/**
 * The dashboard's only way to the gateway: relative `/api/v1` URLs (so it works the same behind
 * the all-in-one and the distributed router), signed in by the gateway's httpOnly session cookie
 * (the page never holds the JWT), and every failure turned into an ApiError carrying the
 * gateway's one error body `{ code, message, ...details }`.
 */

/** A failed API call, with the gateway's error code and message (or ours for network trouble). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** Status-based wording for when the body is not the gateway's error body (e.g. a proxy's HTML page). */
const STATUS_WORDS: Record<number, string> = {
  400: 'The request was not accepted.',
  401: 'You are not signed in, or your session has expired.',
  403: 'You are not allowed to do that.',
  404: 'Not found.',
  409: 'That conflicts with something that already exists.',
  413: 'That is too large.',
  429: 'Too many attempts; wait a moment and try again.',
  501: 'The gateway does not support this yet.',
  502: 'The upstream server failed.',
  503: 'A service the gateway depends on is unavailable; try again shortly.',
  504: 'The upstream server did not answer in time.',
};

/** Builds the ApiError for a non-2xx response from its status and (possibly non-JSON) body text. */
export function errorFromResponse(status: number, bodyText: string): ApiError {
  let body: unknown;
  try {
    body = bodyText ? JSON.parse(bodyText) : undefined;
  } catch {
    body = undefined;
  }
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const { code, message, ...details } = body as Record<string, unknown>;
    if (typeof code === 'string' && typeof message === 'string' && message.trim()) {
      return new ApiError(status, code, message, details);
    }
  }
  const words =
    STATUS_WORDS[status] ?? (status >= 500 ? 'The gateway failed to answer this request.' : 'The request failed.');
  return new ApiError(status, `HTTP_${status}`, `${words} (HTTP ${status})`);
}

/** One sentence for any thrown value, for the error notices of every page. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    const field = typeof err.details.field === 'string' ? err.details.field : null;
    const base = field && !err.message.includes(field) ? `${field}: ${err.message}` : err.message;
    const missing = Array.isArray(err.details.missing)
      ? err.details.missing.filter((m): m is string => typeof m === 'string')
      : [];
    return missing.length > 0 && !missing.every((m) => base.includes(m))
      ? `${base} Missing: ${missing.join(', ')}.`
      : base;
  }
  if (err instanceof DOMException && err.name === 'AbortError') return 'The request was cancelled.';
  if (err instanceof TypeError) return 'The gateway could not be reached. Check your connection and try again.';
  return err instanceof Error && err.message ? err.message : 'Something went wrong.';
}

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface ApiClientOptions {
  /** Whether someone is signed in, read on every call (a 401 then means the session is over). */
  signedIn: () => boolean;
  /** Called when the gateway answers 401 while someone is signed in: the session is over. */
  onUnauthorized?: () => void;
  fetch?: Fetch;
}

export interface ApiClient {
  get<T>(path: string, init?: { signal?: AbortSignal }): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  del<T>(path: string): Promise<T>;
  /** A raw authenticated request (the SSE stream reads the body itself). */
  raw(path: string, init: RequestInit): Promise<Response>;
}

/** The API client; paths are relative to `/api/v1`. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const doFetch: Fetch = options.fetch ?? ((input, init) => fetch(input, init));

  const raw = async (path: string, init: RequestInit): Promise<Response> => {
    const signedIn = options.signedIn();
    // The session cookie goes with every same-origin request; the browser adds Sec-Fetch-Site, the gateway's CSRF check.
    const response = await doFetch(`/api/v1${path}`, { ...init, credentials: 'same-origin' });
    if (!response.ok) {
      const error = errorFromResponse(response.status, await response.text().catch(() => ''));
      if (response.status === 401 && signedIn) options.onUnauthorized?.();
      throw error;
    }
    return response;
  };

  const call = async <T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> => {
    const init: RequestInit = { method, signal, headers: { accept: 'application/json' } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { ...init.headers, 'content-type': 'application/json' };
    }
    const response = await raw(path, init);
    const text = await response.text();
    return (text ? JSON.parse(text) : {}) as T;
  };

  return {
    get: (path, init) => call('GET', path, undefined, init?.signal),
    post: (path, body) => call('POST', path, body ?? {}),
    put: (path, body) => call('PUT', path, body),
    del: (path) => call('DELETE', path),
    raw,
  };
}
