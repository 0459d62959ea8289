/**
 * What of a tool call may be written to the audit log. Applied by the producer, before a job
 * is enqueued, so secrets never reach Redis nor PostgreSQL.
 */

/** What a masked value becomes. */
export const MASK = '********';

/** Largest JSON size (UTF-8 bytes) of `arguments` or `result` kept as is. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Longest `error` text kept, in characters. */
export const MAX_ERROR_CHARS = 4096;

/** Nesting below this depth is replaced by a marker (also bounds the work on hostile input). */
export const MAX_DEPTH = 32;

/**
 * A field is secret when its name, lower-cased with everything but letters and digits removed,
 * contains one of these ("apiKey", "api_key" and "X-API-Key" all become "apikey").
 */
export const SECRET_NAME_PARTS = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'accesskey',
  'authorization',
  'credential',
  'privatekey',
  'cookie',
  'sessionid',
  'signature',
] as const;

/** Whether a field with this name holds a secret (see SECRET_NAME_PARTS). */
export function isSecretName(name: string): boolean {
  return fieldAs(name).secret;
}

/** A field name as logged: cleaned for PostgreSQL, whether its value is masked, its JSON's bound with colon and comma. */
interface FieldName {
  kept: string;
  secret: boolean;
  bytes: number;
}

/**
 * A field name as it is logged. Remembered per name: field names repeat call after call
 * (content, type, text, …), so a body's walk does one lookup per field instead of scans and
 * regex tests.
 */
function fieldAs(name: string): FieldName {
  let known = fieldNames.get(name);
  if (known === undefined) {
    const normalised = name.toLowerCase().replace(/[^a-z0-9]/g, '');
    const kept = cleanString(name);
    known = {
      kept,
      secret: SECRET_NAME_PARTS.some((part) => normalised.includes(part)),
      bytes: jsonTextBytes(kept) + 2,
    };
    // The bound keeps hostile keys from growing it.
    if (fieldNames.size >= MAX_REMEMBERED_NAMES) fieldNames.clear();
    fieldNames.set(name, known);
  }
  return known;
}

const fieldNames = new Map<string, FieldName>();
const MAX_REMEMBERED_NAMES = 10_000;

/** The marker that replaces a body over MAX_BODY_BYTES. */
export interface TruncatedBody {
  $truncated: { originalBytes: number };
}

// eslint-disable-next-line no-control-regex -- NUL is exactly what must go
const NEEDS_CLEANING = /[\u0000\uD800-\uDFFF]/;

/** PostgreSQL refuses NUL in text and jsonb, and lone surrogates in jsonb: both become U+FFFD. */
export function cleanString(value: string): string {
  // Most strings hold neither: one scan without lookarounds, no copy.
  if (!NEEDS_CLEANING.test(value)) return value;
  // eslint-disable-next-line no-control-regex -- NUL is exactly what must go
  return value.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/**
 * One body's walk: the objects above the value being copied (to tell a cycle from a repeat), and
 * an upper bound of the copy's JSON size in UTF-8 bytes, summed as it is built so that a body well
 * within MAX_BODY_BYTES is never serialised just to be measured.
 */
interface Walk {
  ancestors: object[];
  maxBytes: number;
}

/** Characters JSON writes as they are, one byte each; any other may take up to 6 (`\u001f`). */
const NOT_PLAIN = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

/** The most bytes a JSON number takes (`-1.2345678901234567e-308` is 24). */
const NUMBER_BYTES = 25;

/**
 * An upper bound of a number's JSON bytes: exact for a safe integer (ids, counts, timestamps:
 * most numbers in tool bodies), so an array of them is not taken for a big body and serialised
 * to be measured; NUMBER_BYTES for any other.
 */
function numberBytes(value: number): number {
  if (!Number.isSafeInteger(value)) return NUMBER_BYTES;
  let bytes = value < 0 ? 2 : 1;
  for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) bytes++;
  return bytes;
}

/** An upper bound of a text's JSON in UTF-8 bytes, quotes included: exact for plain text. */
function jsonTextBytes(value: string): number {
  return NOT_PLAIN.test(value) ? value.length * 6 + 2 : value.length + 2;
}

/** A string as it is logged (see cleanString), its JSON's bytes added to the walk's bound. */
function walkString(value: string, walk: Walk): string {
  const bytes = jsonTextBytes(value);
  walk.maxBytes += bytes;
  // Only plain text (or the empty string) takes exactly its length and quotes: nothing to clean.
  return bytes === value.length + 2 ? value : cleanString(value);
}

/**
 * A JSON-safe copy: secret-named fields masked at any depth, toJSON honoured (dates become ISO
 * strings), bigint as a decimal string, cycles and over-deep nesting replaced by markers,
 * functions, symbols and undefined dropped as JSON.stringify would (null in an array, counted so).
 */
function sanitise(value: unknown, depth: number, walk: Walk): unknown {
  if (value === null || typeof value === 'boolean') {
    walk.maxBytes += 5;
    return value;
  }
  if (typeof value === 'number') {
    walk.maxBytes += numberBytes(value);
    return Number.isFinite(value) ? value : null;
  }
  if (typeof value === 'string') return walkString(value, walk);
  if (typeof value === 'bigint') return walkString(value.toString(), walk);
  if (typeof value !== 'object') return undefined;
  const withToJson = value as { toJSON?: unknown };
  if (typeof withToJson.toJSON === 'function') {
    return sanitise((withToJson.toJSON as () => unknown).call(value), depth, walk);
  }
  const { ancestors } = walk;
  if (ancestors.includes(value)) return walkString('[circular]', walk);
  if (depth >= MAX_DEPTH) return walkString('[too deep]', walk);
  ancestors.push(value);
  try {
    return Array.isArray(value) ? sanitiseArray(value, depth, walk) : sanitiseFields(value, depth, walk);
  } finally {
    ancestors.pop();
  }
}

/** An array's copy: brackets and a comma per item, a dropped item as null. */
function sanitiseArray(value: readonly unknown[], depth: number, walk: Walk): unknown[] {
  walk.maxBytes += 2 + value.length;
  const out = new Array<unknown>(value.length);
  for (let i = 0; i < value.length; i++) {
    const clean = sanitise(value[i], depth + 1, walk);
    if (clean === undefined) walk.maxBytes += 4;
    out[i] = clean ?? null;
  }
  return out;
}

/** An object's copy: braces, and per field kept its name, a colon and a comma. */
function sanitiseFields(value: object, depth: number, walk: Walk): Record<string, unknown> {
  walk.maxBytes += 2;
  const out: Record<string, unknown> = {};
  const fields = value as Record<string, unknown>;
  // Own enumerable string keys, as Object.entries and JSON.stringify take them, without a pair per field.
  for (const key of Object.keys(fields)) {
    const field = fieldAs(key);
    const clean = field.secret ? walkString(MASK, walk) : sanitise(fields[key], depth + 1, walk);
    if (clean === undefined) continue;
    walk.maxBytes += field.bytes;
    out[field.kept] = clean;
  }
  return out;
}

/**
 * An `arguments` or `result` body as it may be logged: masked (see sanitise), then replaced by
 * a TruncatedBody when its JSON exceeds MAX_BODY_BYTES. `undefined` becomes null.
 */
export function maskBody(value: unknown): unknown {
  return maskBodySized(value).body;
}

/**
 * maskBody, with an upper bound of its JSON's UTF-8 size (what the audit trail sizes its groups
 * by). Only a body whose bound passes MAX_BODY_BYTES is serialised, to be measured exactly.
 */
export function maskBodySized(value: unknown): { body: unknown; maxBytes: number } {
  const walk: Walk = { ancestors: [], maxBytes: 0 };
  const clean = sanitise(value, 0, walk) ?? null;
  if (walk.maxBytes <= MAX_BODY_BYTES) return { body: clean, maxBytes: Math.max(walk.maxBytes, 4) };
  const bytes = Buffer.byteLength(JSON.stringify(clean), 'utf8');
  if (bytes <= MAX_BODY_BYTES) return { body: clean, maxBytes: bytes };
  const marker: TruncatedBody = { $truncated: { originalBytes: bytes } };
  return { body: marker, maxBytes: TRUNCATED_MARKER_BYTES };
}

/** The JSON size of a TruncatedBody, whatever its byte count, rounded up. */
const TRUNCATED_MARKER_BYTES = 48;

/** An error message as it may be logged: cleaned and cut to MAX_ERROR_CHARS with a note. */
export function capError(error: string | null | undefined): string | null | undefined {
  if (error === null || error === undefined) return error;
  const clean = cleanString(String(error));
  if (clean.length <= MAX_ERROR_CHARS) return clean;
  return `${clean.slice(0, MAX_ERROR_CHARS)}… [truncated, ${clean.length} characters]`;
}
