import type { Dispatcher } from 'undici';

/** What the vault answered: its status and the body's bytes. */
export interface VaultAnswer {
  status: number;
  body: Buffer;
}

/**
 * One JSON POST to the vault through undici's dispatch handler API rather than `request()`: no
 * body stream, async iterator or promise chain per invoke, the answer collected under `maxBytes`
 * (a larger one aborts the call). undici's own timers bound the wait for the head and any
 * silence in the body. Rejects on any failure; the caller names it.
 */
export function postToVault(
  dispatcher: Dispatcher,
  url: URL,
  headers: string[],
  body: string,
  limits: { timeoutMs: number; maxBytes: number },
): Promise<VaultAnswer> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let size = 0;
    const chunks: Buffer[] = [];
    dispatcher.dispatch(
      {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        body,
        headersTimeout: limits.timeoutMs,
        bodyTimeout: limits.timeoutMs,
      },
      {
        // Its presence selects undici's controller-based handler API.
        onRequestStart() {},
        onResponseStart(_controller, statusCode) {
          status = statusCode;
        },
        onResponseData(controller, chunk) {
          size += chunk.length;
          if (size > limits.maxBytes)
            controller.abort(new Error(`the vault's answer exceeds ${limits.maxBytes} bytes`));
          else chunks.push(chunk);
        },
        onResponseEnd() {
          resolve({ status, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
        },
        onResponseError(_controller, err) {
          reject(err);
        },
      },
    );
  });
}
