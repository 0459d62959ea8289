import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSION,
} from './protocol.js';

/** The 2026-07-28 request envelope, with any caller-supplied `_meta` keys kept: that revision has no initialize to say it once. */
export function withEnvelope(
  params: Record<string, unknown> | undefined,
  clientInfo: { name: string; version: string },
  capabilities: Record<string, unknown> = {},
): Record<string, unknown> {
  const meta = (params?._meta ?? {}) as Record<string, unknown>;
  // `_meta` named before the spread: adding a key to a spread copy afterwards costs V8 several times more.
  const enveloped: Record<string, unknown> = { _meta: null, ...params };
  enveloped._meta = {
    [META_PROTOCOL_VERSION]: MODERN_PROTOCOL_VERSION,
    [META_CLIENT_INFO]: clientInfo,
    [META_CLIENT_CAPABILITIES]: capabilities,
    ...meta,
  };
  return enveloped;
}

/** The `Mcp-Name` header a 2026-07-28 request mirrors from its params, so an intermediary routes without reading the body. */
export function mcpNameOf(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const source =
    method === 'tools/call' || method === 'prompts/get'
      ? params?.name
      : method.startsWith('resources/')
        ? params?.uri
        : method.startsWith('tasks/')
          ? params?.taskId
          : undefined;
  return typeof source === 'string' ? source : undefined;
}
