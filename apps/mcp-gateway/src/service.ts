import { defineService } from '@agentgw/service-kit';
import { Hono } from 'hono';

/** mcp-gateway: the unified MCP endpoint, the per-provider MCP proxy and the tool gate. */
export const mcpGatewayService = defineService({
  name: 'mcp-gateway',
  defaultPort: 7603,
  create: () => ({ routes: new Hono() }),
});
