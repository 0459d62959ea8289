import {
  createEgressDispatcher,
  egressRefusalOf,
  UpstreamError,
  UpstreamTimeoutError,
  type EgressPolicy,
} from '@agentgw/core';
import type { ProviderAuthType } from '@agentgw/db';
import { isMcpUpstreamError, McpUpstreamClient } from '@agentgw/mcp-client';

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

/** Negotiation and every page of tools/list must finish within this, so a dead upstream cannot hold a request. */
export const DEFAULT_TOOL_LIST_TIMEOUT_MS = 10_000;

/** How a provider's secret travels upstream: `bearer` → Authorization, `api_key` → X-Api-Key. */
export function upstreamAuthHeaders(target: UpstreamTarget): Record<string, string> {
  if (!target.secret) return {};
  if (target.authType === 'bearer') return { authorization: `Bearer ${target.secret}` };
  if (target.authType === 'api_key') return { 'x-api-key': target.secret };
  return {};
}

/** Lists an upstream's tools; one per app, so its connections share one pool behind the egress policy. */
export type UpstreamToolLister = (target: UpstreamTarget, timeoutMs?: number) => Promise<UpstreamTool[]>;

/**
 * Asks an upstream MCP server for its tools with the shared MCP client (@agentgw/mcp-client: any
 * revision 2024-11-05 … 2026-07-28), following cursors, every connection checked by the egress
 * policy after DNS resolution (a refusal is 403 EGRESS_REFUSED). Failures become 502
 * UPSTREAM_ERROR, running out of time 504 UPSTREAM_TIMEOUT; neither carries the upstream's body
 * (it could echo the secret back).
 */
export function createUpstreamToolLister(egress: EgressPolicy): UpstreamToolLister {
  // Keep-alive pools per upstream origin, each upstream's revision remembered.
  const client = new McpUpstreamClient({
    clientInfo: { name: 'agentgw-admin-api', version: '1.0.0' },
    dispatcher: createEgressDispatcher(egress),
  });
  return (target, timeoutMs) => listUpstreamTools(client, target, timeoutMs);
}

async function listUpstreamTools(
  client: McpUpstreamClient,
  target: UpstreamTarget,
  timeoutMs = DEFAULT_TOOL_LIST_TIMEOUT_MS,
): Promise<UpstreamTool[]> {
  // Each listing opens its own upstream session and ends it, so a changed secret or endpoint never reuses an old one.
  const signal = AbortSignal.timeout(timeoutMs);
  const upstream = { endpoint: target.endpoint, headers: upstreamAuthHeaders(target) };
  try {
    const { items, session } = await client.listAll(upstream, 'tools/list', 'tools', { signal, timeoutMs });
    void client.close(upstream, session);
    return items.map((tool) => ({
      name: String(tool.name),
      description: typeof tool.description === 'string' ? tool.description : null,
      inputSchema:
        typeof tool.inputSchema === 'object' && tool.inputSchema !== null
          ? (tool.inputSchema as Record<string, unknown>)
          : {},
    }));
  } catch (err) {
    const refused = egressRefusalOf(err);
    if (refused) throw refused;
    if (signal.aborted || (isMcpUpstreamError(err) && err.kind === 'timeout')) {
      throw new UpstreamTimeoutError(`The provider's upstream did not list its tools within ${timeoutMs} ms`);
    }
    throw new UpstreamError("Could not list the provider's upstream tools", { reason: failureReason(err) });
  } finally {
    client.forget(upstream);
  }
}

/** A short, body-free description of what went wrong. */
function failureReason(err: unknown): string {
  if (!isMcpUpstreamError(err)) return 'the upstream did not speak MCP as expected';
  if (err.kind === 'http' && err.status !== undefined) return `upstream answered HTTP ${err.status}`;
  if (err.kind === 'unreachable') return `connection failed (${err.connectCode ?? 'unknown'})`;
  if (err.kind === 'too_large') return 'the upstream tool list is too large';
  return 'the upstream did not speak MCP as expected';
}
