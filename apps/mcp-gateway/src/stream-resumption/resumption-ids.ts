/** Event ids of paused answer streams: `r.<token>.<index>`, the token 128 random bits (base64url), the index 0 for the priming event. */
const EVENT_ID = /^r\.([A-Za-z0-9_-]{22})\.(\d{1,6})$/;

/** The id of event `index` of the stream `token`. */
export const eventId = (token: string, index: number): string => `r.${token}.${index}`;

/** A `Last-Event-ID` of ours, parsed; null for anything else (which resumes nothing). */
export function parseEventId(value: string): { token: string; index: number } | null {
  const match = EVENT_ID.exec(value);
  return match ? { token: match[1]!, index: Number(match[2]) } : null;
}

const encoder = new TextEncoder();

/** The SEP-1699 priming event: an id, the reconnection delay, and empty data (a client resumes from it and dispatches nothing). */
export const primingFrame = (id: string, retryMs: number): Uint8Array =>
  encoder.encode(`id: ${id}\nretry: ${Math.round(retryMs)}\ndata: \n\n`);
