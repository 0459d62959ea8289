/** The Base64 sentinel a 2026-07-28 client wraps a header value in when it is not plain ASCII (`=?base64?…?=`). */
const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

/**
 * A mirrored header's value as the body would hold it: surrounding whitespace dropped (RFC 9110
 * OWS), a Base64 sentinel decoded; null for an invalid encoding (which is a mismatch).
 */
export function decodeHeaderValue(raw: string): string | null {
  const value = raw.trim();
  const encoded = SENTINEL.exec(value);
  if (!encoded) return value;
  const bytes = Buffer.from(encoded[1]!, 'base64');
  // A lenient decoder skips bad characters and missing padding; the exact round trip tells a valid encoding.
  if (bytes.toString('base64') !== encoded[1]) return null;
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  return text.includes('\uFFFD') ? null : text;
}

/** The body value `Mcp-Name` mirrors for a method (tools/call, prompts/get: `name`; resources/read: `uri`; tasks: `taskId`), if it has one. */
export function mirroredName(
  method: string,
  params: Record<string, unknown> | undefined,
): { field: string; value: unknown } | null {
  switch (method) {
    case 'tools/call':
    case 'prompts/get':
      return { field: 'name', value: params?.name };
    case 'resources/read':
      return { field: 'uri', value: params?.uri };
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
      return { field: 'taskId', value: params?.taskId };
    default:
      return null;
  }
}

/**
 * Why a 2026-07-28 request's mirrored headers disagree with its body, or null when they agree:
 * `Mcp-Method` must equal the method, `Mcp-Name` the name, uri or task id (after decoding).
 * An absent header is not a mismatch: the gateway routes by the body alone (README).
 */
export function headerMismatch(
  method: string,
  params: Record<string, unknown> | undefined,
  header: (name: string) => string | null,
): string | null {
  const methodHeader = header('mcp-method');
  if (methodHeader !== null && methodHeader.trim() !== method)
    return 'Header mismatch: Mcp-Method does not match the body method';
  const nameHeader = header('mcp-name');
  if (nameHeader === null) return null;
  const mirrored = mirroredName(method, params);
  if (mirrored === null) return null;
  if (typeof mirrored.value !== 'string' || decodeHeaderValue(nameHeader) !== mirrored.value)
    return `Header mismatch: Mcp-Name does not match the body params.${mirrored.field}`;
  return null;
}
