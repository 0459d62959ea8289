import { UpstreamError, UpstreamTimeoutError } from '@agentgw/core';
import type { ProviderAuthType } from '@agentgw/db';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface UpstreamTool {
  name: string;
  description: string | null;
  inputSchema: Record<string, unknown>;
}

export interface UpstreamTarget {
  endpoint: string;
  authType: ProviderAuthType;
  /** The opened authSecret; null when none is stored. */
  secret: string | null;
}

/** Connect + every page of tools/list must finish within this, so a dead upstream cannot hold a request. */
export const DEFAULT_TOOL_LIST_TIMEOUT_MS = 10_000;

/** How a provider's secret travels upstream: `bearer` → Authorization, `api_key` → X-Api-Key. */
export function upstreamAuthHeaders(target: UpstreamTarget): Record<string, string> {
  if (!target.secret) return {};
  if (target.authType === 'bearer') return { authorization: `Bearer ${target.secret}` };
  if (target.authType === 'api_key') return { 'x-api-key': target.secret };
  return {};
}

/**
 * Asks an upstream MCP server for its tools with the SDK's Streamable HTTP client: initialize,
 * then tools/list following cursors. Failures become 502 UPSTREAM_ERROR, running out of time
 * 504 UPSTREAM_TIMEOUT; neither carries the upstream's body (it could echo the secret back).
 */
export async function listUpstreamTools(target: UpstreamTarget, timeoutMs = DEFAULT_TOOL_LIST_TIMEOUT_MS): Promise<UpstreamTool[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const client = new Client({ name: 'agentgw-admin-api', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(target.endpoint), {
    requestInit: { headers: upstreamAuthHeaders(target) },
  });
  try {
    await client.connect(transport, { signal, timeout: timeoutMs });
    const tools: UpstreamTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: timeoutMs });
      for (const tool of page.tools) {
        tools.push({ name: tool.name, description: tool.description ?? null, inputSchema: tool.inputSchema });
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  } catch (err) {
    if (signal.aborted) throw new UpstreamTimeoutError(`The provider's upstream did not list its tools within ${timeoutMs} ms`);
    throw new UpstreamError("Could not list the provider's upstream tools", { reason: failureReason(err) });
  } finally {
    // close() aborts any request still in flight; the upstream session is left to expire.
    await client.close().catch(() => undefined);
  }
}

/** A short, body-free description of what went wrong. */
function failureReason(err: unknown): string {
  if (err instanceof StreamableHTTPError && err.code !== undefined) return `upstream answered HTTP ${err.code}`;
  const code = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (typeof code === 'string') return `connection failed (${code})`;
  return 'the upstream did not speak MCP as expected';
}
