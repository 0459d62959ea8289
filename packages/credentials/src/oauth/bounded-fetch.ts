/** Statuses whose response may not carry a body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A fetch whose answers are read into memory up to `maxBytes` and refused beyond: an
 * authorization server's metadata and token answers are small JSON, and one that streams
 * without end must not hold the vault's memory. A refusal rejects like a network error.
 */
export function boundedFetch(fetch: typeof globalThis.fetch, maxBytes: number): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    const tooLarge = () => new Error(`the answer exceeds ${maxBytes} bytes`);
    if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
      await response.body.cancel();
      throw tooLarge();
    }
    const reader = response.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(value);
    }
    return new Response(Buffer.concat(chunks), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
