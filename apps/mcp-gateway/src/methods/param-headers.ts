import { isModernVersion, JSON_RPC } from '@agentgw/mcp-client';
import { decodeHeaderValue } from '../mcp-transport/request-headers.js';
import type { ListItem } from '../provider-view/list-items.js';
import { RpcError } from '../rpc-errors.js';

/** One `x-mcp-header` annotation of a tool's inputSchema: the header it names and where its value sits in the arguments. */
export interface ParamHeader {
  /** `mcp-param-<name>`, lower case (header names are case-insensitive). */
  header: string;
  /** The chain of `properties` keys from the schema root to the annotated property. */
  path: readonly string[];
}

/** RFC 9110 token characters (`1*tchar`): what an `x-mcp-header` value may hold. */
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A value sent as it is: visible ASCII and inner spaces, nothing that looks like the Base64 sentinel. */
const PLAIN = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;
/** Deeper schemas are not walked (a hostile upstream's schema is bounded like everything else). */
const MAX_DEPTH = 8;
const MAX_HEADERS = 32;

const NONE: readonly ParamHeader[] = Object.freeze([]);
const specsOf = new WeakMap<ListItem, readonly ParamHeader[]>();

/**
 * A tool's `Mcp-Param-*` headers (2026-07-28, SEP-2243): the `x-mcp-header` annotations reachable
 * from the schema root through `properties` alone, on string, integer or boolean properties,
 * case-insensitively unique. Computed once per listed definition (kept beside it, weakly), so a
 * call of a tool without annotations costs one lookup. An invalid annotation yields none.
 */
export function paramHeadersOf(tool: ListItem): readonly ParamHeader[] {
  let specs = specsOf.get(tool);
  if (specs === undefined) {
    specs = collect(tool.inputSchema);
    specsOf.set(tool, specs);
  }
  return specs;
}

function collect(schema: unknown): readonly ParamHeader[] {
  const found: ParamHeader[] = [];
  const walk = (node: unknown, path: string[]): boolean => {
    if (!isObject(node) || path.length > MAX_DEPTH) return true;
    const props = node.properties;
    if (!isObject(props)) return true;
    for (const [key, prop] of Object.entries(props)) {
      if (!isObject(prop)) continue;
      const name = prop['x-mcp-header'];
      if (name !== undefined) {
        if (
          typeof name !== 'string' ||
          !TCHAR.test(name) ||
          !['string', 'integer', 'boolean'].includes(prop.type as string)
        )
          return false;
        const header = `mcp-param-${name.toLowerCase()}`;
        if (found.some((f) => f.header === header) || found.length >= MAX_HEADERS) return false;
        found.push({ header, path: [...path, key] });
      }
      if (!walk(prop, [...path, key])) return false;
    }
    return true;
  };
  return walk(schema, []) && found.length > 0 ? found : NONE;
}

/** The value at `path` in the arguments, or undefined when absent (null counts as absent: the header is omitted). */
function valueAt(args: Record<string, unknown>, path: readonly string[]): unknown {
  let node: unknown = args;
  for (const key of path) {
    if (!isObject(node)) return undefined;
    node = node[key];
  }
  return node === null ? undefined : node;
}

/** A value as its header carries it: strings as they are, integers in decimal, booleans in lower case; Base64 sentinel when not plain ASCII. Null for a value of another type. */
export function encodeParamValue(value: unknown): string | null {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'boolean') text = String(value);
  else if (typeof value === 'number' && Number.isSafeInteger(value)) text = String(value);
  else return null;
  const sentinel = text.startsWith('=?base64?') && text.endsWith('?=');
  return PLAIN.test(text) && !sentinel ? text : `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

/** The `Mcp-Param-*` headers a call sends upstream (null when the tool names none or the call gives none of their values). */
export function paramHeadersFor(
  specs: readonly ParamHeader[],
  args: Record<string, unknown>,
): Record<string, string> | null {
  if (specs.length === 0) return null;
  let headers: Record<string, string> | null = null;
  for (const spec of specs) {
    const encoded = encodeParamValue(valueAt(args, spec.path));
    if (encoded !== null) (headers ??= {})[spec.header] = encoded;
  }
  return headers;
}

/**
 * Why a 2026-07-28 tools/call's `Mcp-Param-*` headers disagree with its arguments, or null: a
 * value in the body needs its header, equal after decoding (an invalid Base64 sentinel never
 * is); a header without a value in the body is a mismatch too.
 */
export function paramHeaderMismatch(
  specs: readonly ParamHeader[],
  args: Record<string, unknown>,
  headers: Pick<Headers, 'get'>,
): string | null {
  for (const spec of specs) {
    const value = valueAt(args, spec.path);
    const raw = headers.get(spec.header);
    if (value === undefined && raw === null) continue;
    if (raw === null)
      return `Header mismatch: ${spec.header} is required when arguments.${spec.path.join('.')} is given`;
    if (encodeParamValue(value) === null || decodeHeaderValue(raw) !== String(value))
      return `Header mismatch: ${spec.header} does not match arguments.${spec.path.join('.')}`;
  }
  return null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Each listed tool array indexed by name once (the lists are replaced, never changed, so the index stays right). */
const byName = new WeakMap<readonly ListItem[], Map<unknown, ListItem>>();

/**
 * tools/call's `Mcp-Param-*` step: on the 2026-07-28 wire the client's headers must agree with the
 * arguments (else 400 -32020); the headers the provider's definition names are what goes upstream
 * (null when it names none: a plain call allocates nothing here).
 */
export function toolParamHeaders(
  tools: readonly ListItem[],
  name: string,
  args: Record<string, unknown>,
  request: { protocolVersion: string; headers: Pick<Headers, 'get'> },
): Record<string, string> | null {
  if (tools.length === 0) return null;
  let index = byName.get(tools);
  if (index === undefined) {
    index = new Map(tools.map((tool) => [tool.name, tool]));
    byName.set(tools, index);
  }
  const tool = index.get(name);
  if (tool === undefined) return null;
  const specs = paramHeadersOf(tool);
  if (specs.length === 0) return null;
  if (isModernVersion(request.protocolVersion)) {
    const mismatch = paramHeaderMismatch(specs, args, request.headers);
    if (mismatch !== null) throw new RpcError(JSON_RPC.HEADER_MISMATCH, mismatch, 400);
  }
  return paramHeadersFor(specs, args);
}
