import { ErrorBody, flexibleSecurity } from '@agentgw/service-kit';
import { z, type OpenAPIHono } from '@hono/zod-openapi';

const JsonRpcMessage = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional().openapi({ description: 'Absent on notifications' }),
    method: z.string().openapi({ example: 'tools/call' }),
    params: z.record(z.string(), z.unknown()).optional().openapi({
      description:
        'tools/call: `{ name, arguments, _meta? }`. 2026-07-28 requests carry `_meta["io.modelcontextprotocol/protocolVersion"]` and `…/clientCapabilities`; an approval token may ride in `_meta["agentgw/confirmationToken"]`.',
    }),
  })
  .openapi('JsonRpcRequest');

const JsonRpcAnswer = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).nullable(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
  })
  .openapi('JsonRpcResponse');

const headers = z.object({
  'mcp-session-id': z
    .string()
    .optional()
    .openapi({
      description:
        'Session revisions: the id `initialize` answered with (sealed; any replica continues it). Without it a legacy request is served statelessly',
    }),
  'mcp-protocol-version': z
    .string()
    .optional()
    .openapi({ description: '2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 or 2026-07-28; another → 400' }),
  'x-confirmation-token': z
    .string()
    .optional()
    .openapi({ description: 'Exact-call approval token from a confirming answer' }),
});

const rpcAnswer = (description: string) => ({
  description,
  content: {
    'application/json': { schema: JsonRpcAnswer },
    'text/event-stream': {
      schema: z.string().openapi({ description: 'SSE `message` events: notifications, then the answer' }),
    },
  },
});
const error = (description: string) => ({
  description,
  content: { 'application/json': { schema: z.union([JsonRpcAnswer, ErrorBody]) } },
});

/**
 * The MCP endpoints are plain Hono handlers (JSON-RPC over Streamable HTTP does not fit one
 * request schema per route); their contract is documented here for the OpenAPI document.
 */
export function documentMcpEndpoints(app: OpenAPIHono): void {
  for (const [path, label, params] of [
    ['/api/v1/mcp/mcp', 'Unified MCP endpoint (every reachable provider merged)', z.object({})],
    ['/api/v1/mcp-proxy/{providerId}/mcp', 'Per-provider MCP proxy', z.object({ providerId: z.string() })],
  ] as const) {
    const query =
      path === '/api/v1/mcp/mcp'
        ? z.object({
            providers: z
              .string()
              .optional()
              .openapi({ description: 'Comma-separated provider ids: list and route among these only' }),
          })
        : undefined;
    const common = {
      tags: ['MCP'],
      security: flexibleSecurity,
      request: { params, headers, ...(query ? { query } : {}) },
    };
    app.openAPIRegistry.registerPath({
      ...common,
      method: 'post',
      path,
      summary: `${label}: JSON-RPC 2.0`,
      description:
        'initialize, notifications/*, ping, server/discover, tools/list, tools/call, resources/list, resources/templates/list, resources/read, prompts/list, prompts/get (the proxy forwards every other method). No initialize is needed: a request without session or version is served statelessly as 2025-11-25. JSON or SSE by Accept; batches on 2025-03-26 only, at most 20 messages. See the mcp-gateway README for how the revision is picked and the error mapping.',
      request: {
        ...common.request,
        body: {
          required: true,
          content: { 'application/json': { schema: z.union([JsonRpcMessage, z.array(JsonRpcMessage)]) } },
        },
      },
      responses: {
        200: rpcAnswer('The answer (JSON, or SSE when progress or a held call streams first)'),
        202: { description: 'Notifications and client responses accepted' },
        400: error('Parse error, invalid request, unsupported version, batch not allowed or over 20 messages'),
        401: error('No or bad credentials'),
        403: error(
          'Denied by policy, provider access, kill switch, confirmation rejected, the egress policy (EGRESS_REFUSED), or a foreign Origin',
        ),
        404: error('Unknown, ended or evicted session; unknown provider (proxy)'),
        502: error('The upstream could not be reached'),
        504: error('The upstream did not answer in time'),
      },
    });
    app.openAPIRegistry.registerPath({
      ...common,
      method: 'get',
      path,
      summary: `${label}: the session's server stream (SSE)`,
      responses: {
        200: { description: 'text/event-stream with list_changed notifications' },
        400: error('No session'),
        404: error('Unknown session'),
        405: error('2026-07-28 has no GET stream'),
        406: error('Accept lacks text/event-stream'),
      },
    });
    app.openAPIRegistry.registerPath({
      ...common,
      method: 'delete',
      path,
      summary: `${label}: end the session and the upstream sessions it opened`,
      responses: { 204: { description: 'Ended' }, 400: error('No session'), 404: error('Unknown session') },
    });
  }
}
