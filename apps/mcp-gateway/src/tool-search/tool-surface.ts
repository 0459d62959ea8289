import type { Principal } from '@agentgw/auth';
import type { Catalog } from '@agentgw/catalog';
import { TOOL_SURFACES, type ToolSurface } from '@agentgw/core';
import type { McpEndpoint } from '../mcp-context.js';
import { invalidParams } from '../rpc-errors.js';

/**
 * Which tool surface a request on the unified endpoint gets: the URL's `?tools=all|search` when
 * present, else the acting agent's `toolSurface` setting, else the whole list. The per-provider
 * proxy always serves its provider's tools as they are.
 */
export async function toolSurfaceOf(
  catalog: Pick<Catalog, 'agents'>,
  principal: Principal,
  endpoint: McpEndpoint,
): Promise<ToolSurface> {
  if (endpoint.kind === 'proxy') return 'all';
  if (endpoint.toolsParam !== null) return surfaceParam(endpoint.toolsParam);
  if (principal.agentId === null) return 'all';
  // The cached record the kill switch read a moment ago (dropped on agent.changed on every replica).
  const agent = await catalog.agents.get(principal.agentId);
  return agent?.toolSurface ?? 'all';
}

/** `?tools=` as given: one of TOOL_SURFACES, anything else a -32602 that names the choices. */
function surfaceParam(raw: string): ToolSurface {
  const surface = TOOL_SURFACES.find((s) => s === raw);
  if (surface === undefined) throw invalidParams(`The endpoint's ?tools= must be one of: ${TOOL_SURFACES.join(', ')}`);
  return surface;
}
